// wireup-bench-tokenize TOKENIZER FILE THREADS: encodes every line of FILE
// (one document each, as tiktoken's encode_ordinary_batch gets them) with
// Tokenizer::encode on THREADS threads, each a contiguous range of lines, and
// prints "MB_PER_S TOKENS": MB of text per second of wall time, the file read
// and split beforehand. bench/prep/llama3_vs_tiktoken.sh runs it.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "wireup/tokenizer/tokenizer.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: wireup-bench-tokenize TOKENIZER FILE THREADS\n";
    return 2;
  }
  try {
    const auto tok = wireup::tokenizer::Tokenizer::load(argv[1]);
    std::ifstream in(argv[2], std::ios::binary);
    if (!in) throw std::runtime_error(std::string(argv[2]) + ": cannot read");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::vector<std::string_view> lines;
    for (std::size_t at = 0; at < text.size();) {
      auto end = text.find('\n', at);
      if (end == std::string::npos) end = text.size();
      lines.emplace_back(text.data() + at, end - at);
      at = end + 1;
    }
    const unsigned threads = static_cast<unsigned>(std::stoul(argv[3]));
    if (threads == 0 || threads > 1024) throw std::runtime_error("THREADS: 1 to 1024");
    std::vector<std::size_t> tokens(threads, 0);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::vector<int> ids;
        const std::size_t begin = lines.size() * t / threads,
                          end = lines.size() * (t + 1) / threads;
        for (std::size_t i = begin; i < end; ++i) {
          tok.encode(lines[i], ids);
          tokens[t] += ids.size();
        }
      });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::size_t total = 0;
    for (const auto n : tokens) total += n;
    std::printf("%.2f %zu\n", static_cast<double>(text.size()) / s / 1e6, total);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wireup-bench-tokenize: " << e.what() << "\n";
    return 2;
  }
}
