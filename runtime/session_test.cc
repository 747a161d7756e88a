
namespace nuphar {
namespace {

TEST(SessionTest, RefusesUnknownSetting) {
  SessionOptions options;
  options.settings = "nuphar_no_such_key:1";
  auto s = Session::CreateFromModel(IdentityModel(), options);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown key 'nuphar_no_such_key'"), std::string::npos) << s.message();
  options.settings = "nuphar_execution_mode:REFERENCE, nuphar_cache_path:C:\\x";
  EXPECT_TRUE(Session::CreateFromModel(IdentityModel(), options).ok());
}

}  // namespace
}  // namespace nuphar
