// presto::apps::CommandLine: the command-line parsing the apps share.
//
// Contract. An app gives its usage text ("%s" in it stands for argv[0]; it is printed on
// stdout), names its options, each bound to a variable (or to a handler), then calls
// parse(argc, argv) once:
//   - "--help" or "-h": prints the usage and exits with status 0.
//   - "--name value" for an option: converts value to the bound variable's type and stores it.
//     Integers (signed or unsigned, any width) and doubles must be the whole argument and fit
//     the type; std::string takes the argument as it is; std::vector<T> takes a comma-separated
//     list of T ("" is the empty list, a trailing comma ends the list).
//   - "--name" for a flag: sets the bound bool to true, or runs the bound handler.
//   - An unknown argument ("unknown argument '--x'"), an option without its value ("--size
//     needs a value") or a value that does not convert ("--size: 'x' is not a valid value"):
//     prints the message on stderr, then the usage, and returns false; the app's main then
//     returns 2.
//   - Otherwise returns true, having stored every value in the order given (later wins).
// error(message), for an app's own checks after parse(), reports the same way and returns false.
// A handler may throw BadValue to be reported the same way; any other exception it throws
// propagates to the caller unchanged (the apps' mains report those).
// "--processors P" (processors()) has one meaning in every app: P processors, 0 for one per
// hardware thread, more than presto::kMaxProcessorsPerHardwareThread times the hardware threads
// refused as a bad value (presto::resolve_processors, which PRESTO_PROCESSORS obeys too).
// Header-only; the standard library and presto/runtime.hpp only.

#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <presto/runtime.hpp>

namespace presto::apps {

// A malformed command line: parse() prints what() and the usage and returns false.
struct BadValue : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The value of option `name` in `text`, as a T (an integer, a double or a std::string).
template <class T>
T parse_value(std::string_view name, const std::string& text) {
  if constexpr (std::is_same_v<T, std::string>) {
    return text;
  } else {
    static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, "unsupported option type");
    T v{};
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [end, ec] = std::from_chars(first, last, v);
    if (text.empty() || ec != std::errc{} || end != last) {
      throw BadValue(std::string(name) + ": '" + text + "' is not a valid value");
    }
    return v;
  }
}

// The comma-separated list of option `name` in `text`, each element a T.
template <class T>
std::vector<T> parse_list(std::string_view name, const std::string& text) {
  std::vector<T> out;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t comma = text.find(',', pos);
    out.push_back(parse_value<T>(name, text.substr(pos, comma - pos)));
    pos = comma == std::string::npos ? text.size() : comma + 1;
  }
  return out;
}

class CommandLine {
 public:
  explicit CommandLine(std::string usage) : usage_(std::move(usage)) {}

  // "--name value", converted to T and stored in `target`.
  template <class T>
    requires(!std::is_invocable_v<T&, const std::string&>)
  CommandLine& option(std::string name, T& target) {
    const std::string n = name;
    return add(std::move(name), true, [n, &target](const std::string& v) {
      if constexpr (is_vector<T>::value) {
        target = parse_list<typename T::value_type>(n, v);
      } else {
        target = parse_value<T>(n, v);
      }
    });
  }

  // "--name value", handed to `handler` as it is.
  CommandLine& option(std::string name, std::function<void(const std::string&)> handler) {
    return add(std::move(name), true, std::move(handler));
  }

  // "--processors P": stores presto::resolve_processors(P) (see the contract above).
  CommandLine& processors(std::size_t& target) {
    return option("--processors", [&target](const std::string& v) {
      target = resolved_processors(parse_value<std::size_t>("--processors", v));
    });
  }

  // "--processors P[,P...]": each P as above.
  CommandLine& processors(std::vector<std::size_t>& target) {
    return option("--processors", [&target](const std::string& v) {
      target = parse_list<std::size_t>("--processors", v);
      for (std::size_t& p : target) p = resolved_processors(p);
    });
  }

  // "--name" alone: sets `target` to true.
  CommandLine& flag(std::string name, bool& target) {
    return add(std::move(name), false, [&target](const std::string&) { target = true; });
  }

  // "--name" alone: runs `handler`.
  CommandLine& flag(std::string name, std::function<void()> handler) {
    return add(std::move(name), false, [h = std::move(handler)](const std::string&) { h(); });
  }

  // See the contract above.
  bool parse(int argc, char** argv) {
    if (argc > 0) argv0_ = argv[0];
    try {
      for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
          print_usage();
          std::exit(0);
        }
        const Option* opt = find(arg);
        if (opt == nullptr) throw BadValue("unknown argument '" + arg + "'");
        if (!opt->takes_value) {
          opt->apply("");
        } else {
          if (i + 1 >= argc) throw BadValue(arg + " needs a value");
          opt->apply(argv[++i]);
        }
      }
    } catch (const BadValue& e) {
      return error(e.what());
    }
    return true;
  }

  // Prints `message` on stderr and the usage on stdout; returns false.
  bool error(const std::string& message) const {
    std::fprintf(stderr, "%s\n", message.c_str());
    print_usage();
    return false;
  }

  // Prints the usage text on stdout, "%s" replaced by the program's name.
  void print_usage() const {
    std::string text = usage_;
    if (const std::size_t at = text.find("%s"); at != std::string::npos) text.replace(at, 2, argv0_);
    std::fputs(text.c_str(), stdout);
  }

 private:
  struct Option {
    std::string name;
    bool takes_value;
    std::function<void(const std::string&)> apply;
  };

  static std::size_t resolved_processors(std::size_t requested) {
    try {
      return presto::resolve_processors(requested, "--processors");
    } catch (const presto::UsageError& e) {
      throw BadValue(e.what());
    }
  }

  template <class T>
  struct is_vector : std::false_type {};
  template <class T, class A>
  struct is_vector<std::vector<T, A>> : std::true_type {};

  CommandLine& add(std::string name, bool takes_value, std::function<void(const std::string&)> apply) {
    options_.push_back(Option{std::move(name), takes_value, std::move(apply)});
    return *this;
  }

  const Option* find(const std::string& name) const {
    for (const Option& o : options_) {
      if (o.name == name) return &o;
    }
    return nullptr;
  }

  std::string usage_;
  std::string argv0_;
  std::vector<Option> options_;
};

}  // namespace presto::apps
