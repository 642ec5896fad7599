// The reader of `kinema sim` scenes and `kinema grow` specs: values out of the JSON, each error at
// its JSON pointer (module-private: sim_scene.cpp, sim_bodies_scene.cpp, grow.cpp).
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "kinema/core/error.h"
#include "kinema/math/vec3.h"

namespace kinema::pipeline {

/// Reads values out of the scene, naming each by its JSON pointer in errors.
struct SceneReader {
  const std::string& file;

  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw Error(file, pointer.empty() ? "/" : pointer, reason);
  }
  /// The document `text`; malformed JSON fails at the line and column where parsing stopped.
  nlohmann::json parse(const std::string& text) const {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      // nlohmann's byte is 1-based.
      throw Error(file, at_line_and_column(text, e.byte > 0 ? e.byte - 1 : 0),
                  std::string("malformed JSON: ") + e.what());
    } catch (const nlohmann::json::exception& e) {  // a number past a double's range (1e999)
      fail("/", std::string("malformed JSON: ") + e.what());
    }
  }
  /// Refuses keys of `object` not in `known` (a typo would otherwise be silently ignored).
  void only(const nlohmann::json& object, const std::string& pointer,
            std::initializer_list<const char*> known) const {
    if (!object.is_object()) fail(pointer, "must be an object");
    for (const auto& [key, value] : object.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        std::string list;
        for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
        fail(pointer + "/" + key, "unknown key \"" + key + "\" (known: " + list + ")");
      }
    }
  }
  double number(const nlohmann::json& v, const std::string& pointer) const {
    if (!v.is_number()) fail(pointer, "must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(pointer, "must be finite");
    return d;
  }
  double at_least(const nlohmann::json& v, const std::string& pointer, double low,
                  bool strict) const {
    const double d = number(v, pointer);
    if (strict ? !(d > low) : !(d >= low))
      fail(pointer, std::string("must be ") + (strict ? "> " : "≥ ") + format(low));
    return d;
  }
  int whole(const nlohmann::json& v, const std::string& pointer, int low, int high) const {
    if (!v.is_number_integer() && !v.is_number_unsigned()) fail(pointer, "must be a whole number");
    const long long i = v.get<long long>();
    if (i < low || i > high)
      fail(pointer, "must be between " + std::to_string(low) + " and " + std::to_string(high));
    return int(i);
  }
  bool boolean(const nlohmann::json& v, const std::string& pointer) const {
    if (!v.is_boolean()) fail(pointer, "must be true or false");
    return v.get<bool>();
  }
  Vec3 vec3(const nlohmann::json& v, const std::string& pointer) const {
    if (!v.is_array() || v.size() != 3) fail(pointer, "must be an array of 3 numbers");
    return {number(v[0], pointer + "/0"), number(v[1], pointer + "/1"),
            number(v[2], pointer + "/2")};
  }
  std::string text(const nlohmann::json& v, const std::string& pointer) const {
    if (!v.is_string()) fail(pointer, "must be a string");
    return v.get<std::string>();
  }
  static std::string format(double d) {
    std::string s = std::to_string(d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
};

}  // namespace kinema::pipeline
