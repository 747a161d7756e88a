#!/usr/bin/python3
"""report.html in a real browser (issue 15): runs a small rnn_benchmark sweep, loads its report in
headless Debian chromium, and checks that no console message is logged (the page has no script, so
any message is an error), that the DOM holds the three charts with bars, that the page references
nothing outside itself, and that the screenshot shows the plots (pixels of each engine's colour).

  report_browser_test.py RNN_BENCHMARK [--keep DIR]
Exit 77 (ctest: skipped) with a message when chromium is not installed (scripts/setup.sh installs it).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync']
# report_html.cc's colours: our three engines, and the two error series.
PLOT_COLOURS = {'nuphar float RNN': (0x4e, 0x79, 0xa7), 'nuphar float Scan': (0x59, 0xa1, 0x4f),
                'nuphar int8 Scan': (0xe1, 0x57, 0x59), 'int8 mean abs error': (0xff, 0x9d, 0x9a)}
SWEEP = ['--rnn_type', 'lstm', '--input_dim', '16', '--layers', '1', '--seq_len', '8', '--num_threads', '1',
         '--sweep', 'hidden=32,64', '--sweep', 'rnn_type=lstm,gru', '--min_seconds', '0.05', '--min_runs', '3']


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG (what chromium writes)."""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        fail(path + ' is not a PNG')
    pos, idat, width = 8, b'', 0
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            width, height, depth, colour = struct.unpack('>IIBB', body[:10])
            if depth != 8 or colour not in (2, 6):
                fail('unexpected PNG format depth %d colour type %d' % (depth, colour))
            bpp = 3 if colour == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def chromium(exe, profile_dir, args, url):
    cmd = [exe] + CHROMIUM_FLAGS + ['--user-data-dir=' + profile_dir, '--enable-logging=stderr', '--v=0'] + args + [url]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail('chromium exited with %d:\n%s' % (r.returncode, r.stderr[-2000:]))
    console = [l for l in r.stderr.splitlines() if ':CONSOLE' in l]
    return r.stdout, console


def main():
    if len(sys.argv) < 2:
        fail('usage: report_browser_test.py RNN_BENCHMARK [--keep DIR]')
    exe = shutil.which('chromium')
    if not exe:
        print('SKIPPED: chromium is not installed (apt-get install chromium, or run scripts/setup.sh)')
        sys.exit(77)
    work = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == '--keep' else tempfile.mkdtemp(prefix='report_test_')
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, 'out')
    r = subprocess.run([sys.argv[1]] + SWEEP + ['--out', out], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail('rnn_benchmark failed (%d): %s' % (r.returncode, r.stderr))
    report = os.path.join(out, 'report.html')
    html = open(report, encoding='utf-8').read()
    # Self-contained: nothing loaded from elsewhere (the SVG namespace URI is a name, not a load).
    external = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"|url\(([^)]*)\)|<script|<link', html)
    if external:
        fail('report.html references outside content: %s' % (external[:5],))
    url = 'file://' + os.path.abspath(report)

    dom, console = chromium(exe, tempfile.mkdtemp(dir=work), ['--dump-dom'], url)
    if console:
        fail('console messages while loading the report:\n' + '\n'.join(console))
    for chart in ('latency', 'speedup', 'error'):
        m = re.search(r'<svg id="%s".*?</svg>' % chart, dom, re.S)
        if not m:
            fail('the DOM has no <svg id="%s"> chart' % chart)
        bars = len(re.findall(r'<rect [^>]*><title>', m.group(0)))
        if bars < 8:  # 4 configurations x at least 2 series
            fail('chart %s has %d bars, expected at least 8' % (chart, bars))

    shot = os.path.join(work, 'report.png')
    _, console = chromium(exe, tempfile.mkdtemp(dir=work), ['--window-size=1200,1400', '--screenshot=' + shot], url)
    if console:
        fail('console messages while taking the screenshot:\n' + '\n'.join(console))
    width, height, rows, bpp = read_png(shot)
    counts = {name: 0 for name in PLOT_COLOURS}
    white = 0
    wanted = {c: n for n, c in PLOT_COLOURS.items()}
    for row in rows:
        for x in range(0, len(row), bpp):
            rgb = (row[x], row[x + 1], row[x + 2])
            if rgb == (255, 255, 255):
                white += 1
            elif rgb in wanted:
                counts[wanted[rgb]] += 1
    total = width * height
    print('screenshot %dx%d: %.1f%% white; plot colour pixels: %s' % (width, height, 100.0 * white / total, counts))
    if white > 0.98 * total:
        fail('the screenshot is blank')
    missing = [n for n, c in counts.items() if c < 100]
    if missing:
        fail('the screenshot shows no bars of: ' + ', '.join(missing))
    print('PASS: %s loads in %s with no console message; the three charts are drawn' % (report, exe))
    if work != (sys.argv[3] if len(sys.argv) > 3 else None):
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
