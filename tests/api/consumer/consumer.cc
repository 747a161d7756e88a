// An application of the installed package in C++ (find_package(nuphar), nuphar_cxx_api.h).
// Usage and files as consumer.c: consumer_cxx MODEL IN_DIR OUT_DIR.
#include <nuphar/nuphar_cxx_api.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: consumer_cxx MODEL IN_DIR OUT_DIR\n";
    return 2;
  }
  const std::string in_dir = argv[2], out_dir = argv[3];
  try {
    nuphar::cxx::Session session(argv[1]);
    std::ifstream list(in_dir + "/inputs.txt");
    std::vector<std::vector<char>> data;
    std::vector<nuphar::cxx::Input> inputs;
    std::string name;
    int dtype = 0;
    size_t rank = 0;
    data.reserve(64);  // Input points into these vectors
    while (list >> name >> dtype >> rank) {
      std::vector<int64_t> shape(rank);
      for (auto& d : shape) list >> d;
      std::ifstream f(in_dir + "/" + name + ".bin", std::ios::binary);
      data.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      inputs.emplace_back(name, static_cast<NupharDType>(dtype), shape, data.back().data(), data.back().size());
    }
    auto outputs = session.Run(inputs);
    auto infos = session.Outputs();
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::ofstream out(out_dir + "/" + infos[i].name + ".bin", std::ios::binary);
      out.write(static_cast<const char*>(outputs[i].data()), static_cast<std::streamsize>(outputs[i].bytes()));
    }
    std::cout << "consumer_cxx: " << argv[1] << " ran, " << outputs.size() << " outputs\n";
  } catch (const nuphar::cxx::Error& e) {
    std::cerr << "consumer_cxx: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
