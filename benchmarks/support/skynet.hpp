#pragma once
// skynet: a tree of PRESTO threads, ten children a node, summing the leaves' numbers
// first .. first + size - 1 (size a power of ten). The benchmarks' common thread-tree kernel.

#include <cstdint>

#include <presto/runtime.hpp>

namespace presto::bench {

inline std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) return first;
  JoinHandle<std::uint64_t> children[10];
  for (std::uint64_t i = 0; i < 10; ++i) children[i] = fork(skynet, first + i * (size / 10), size / 10);
  std::uint64_t sum = 0;
  for (auto& c : children) sum += c.join();
  return sum;
}

}  // namespace presto::bench
