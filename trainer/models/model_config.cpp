#include "models/model_config.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "wireup/error.hpp"

namespace wireup::train {

std::string rope_scaling_str(const RopeScaling& r) {
  if (!r.enabled()) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s:%g,%g,%g,%lld", r.type.c_str(), r.factor, r.low_freq_factor,
                r.high_freq_factor, static_cast<long long>(r.original_context));
  return buf;
}

RopeScaling parse_rope_scaling(const std::string& text) {
  if (text == "none") return {};
  const std::string bad = "--rope_scaling " + text +
                          ": expected none or llama3:FACTOR,LOW_FREQ_FACTOR,HIGH_FREQ_FACTOR,"
                          "ORIGINAL_CONTEXT (Llama 3.1: llama3:8,1,4,8192)";
  if (text.rfind("llama3:", 0) != 0) throw InputError(bad);
  std::istringstream in(text.substr(7));
  RopeScaling r;
  r.type = "llama3";
  char c1 = 0, c2 = 0, c3 = 0;
  double orig = 0;
  if (!(in >> r.factor >> c1 >> r.low_freq_factor >> c2 >> r.high_freq_factor >> c3 >> orig) ||
      c1 != ',' || c2 != ',' || c3 != ',' || !(in >> std::ws).eof() || orig != std::floor(orig) ||
      orig < 1 || orig > 1e12)
    throw InputError(bad);
  r.original_context = static_cast<std::int64_t>(orig);
  return r;
}

std::vector<double> rope_inv_freq(const ModelConfig& m) {
  const std::int64_t hd = m.head_dim();
  std::vector<double> inv(static_cast<std::size_t>(hd / 2));
  const RopeScaling& r = m.rope_scaling;
  const double pi = 3.14159265358979323846;
  const double low_wavelen = static_cast<double>(r.original_context) / r.low_freq_factor;
  const double high_wavelen = static_cast<double>(r.original_context) / r.high_freq_factor;
  for (std::size_t i = 0; i < inv.size(); ++i) {
    double f = 1.0 / std::pow(m.rope_theta, 2.0 * static_cast<double>(i) / static_cast<double>(hd));
    if (r.enabled()) {
      const double wavelen = 2.0 * pi / f;
      if (wavelen > low_wavelen) {
        f /= r.factor;                       // low frequencies: stretched to the longer context
      } else if (wavelen >= high_wavelen) {  // the band between: blended
        const double smooth =
            (static_cast<double>(r.original_context) / wavelen - r.low_freq_factor) /
            (r.high_freq_factor - r.low_freq_factor);
        f = (1.0 - smooth) * f / r.factor + smooth * f;
      }  // high frequencies (wavelength below original/high_freq_factor): kept
    }
    inv[i] = f;
  }
  return inv;
}

}  // namespace wireup::train
