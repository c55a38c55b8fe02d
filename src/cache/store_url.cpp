// The store URL (Settings::store, TUNEKIT_STORE): redis://host[:port][/db], checked strictly.
#include <charconv>

#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/redis_store.hpp"

namespace tunekit {
namespace {

constexpr std::size_t max_url_chars = 255;
constexpr std::string_view scheme = "redis://";

[[noreturn]] void bad_url(std::string_view source, std::string_view text, const std::string& why) {
  throw AutotuneError(ErrorKind::settings,
                      std::string(source) + "='" + printable(text, 300) +
                          "' is not a store URL: " + why +
                          "; expected redis://HOST[:PORT][/DB], e.g. redis://127.0.0.1:6379/0");
}

/// A decimal number in [0, max], no sign, no leading zeros beyond "0", at most 5 digits.
std::optional<unsigned> number(std::string_view text, unsigned max) {
  if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// A DNS name (RFC 1123 labels) or a dotted IPv4 address.
bool is_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const char c = host[i];
    if (c == '.') {
      if (label == 0 || host[i - 1] == '-') return false;
      label = 0;
    } else if (is_alnum(c) || (c == '-' && label > 0)) {
      if (++label > 63) return false;
    } else {
      return false;
    }
  }
  return label > 0 && host.back() != '-';
}

/// The inside of [...]: hex digits, ':' and '.' (an embedded IPv4), at most 45 characters.
bool is_ipv6(std::string_view host) {
  if (host.size() < 2 || host.size() > 45 || host.find(':') == std::string_view::npos) return false;
  for (char c : host) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return false;
  }
  return true;
}

}  // namespace

std::string StoreAddress::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(scheme) + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
         std::to_string(db);
}

StoreAddress parse_store_url(std::string_view text, std::string_view source) {
  if (text.size() > max_url_chars) {
    bad_url(source, text, "longer than " + std::to_string(max_url_chars) + " characters");
  }
  for (unsigned char c : text) {
    if (c <= ' ' || c >= 0x7f)
      bad_url(source, text, "it has a space, control or non-ASCII character");
  }
  if (text.starts_with("rediss://")) {
    bad_url(source, text,
            "TLS (rediss://) is not supported; reach the server over a trusted "
            "network or a tunnel");
  }
  if (!text.starts_with(scheme)) bad_url(source, text, "it does not start with redis://");
  std::string_view rest = text.substr(scheme.size());
  if (rest.find_first_of("@") != std::string_view::npos) {
    bad_url(source, text,
            "a user or password in the URL is not supported (it would show in "
            "logs and process listings)");
  }
  if (rest.find_first_of("?#") != std::string_view::npos) {
    bad_url(source, text, "it has a query or fragment");
  }
  StoreAddress address;
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    const auto value = number(db, 65535);
    if (!value)
      bad_url(source, text,
              "the database '" + std::string(db) + "' is not a number from 0 to 65535");
    address.db = *value;
  }
  std::string_view host;
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad_url(source, text, "an IPv6 address without its ']'");
    host = authority.substr(1, close - 1);
    if (!is_ipv6(host)) bad_url(source, text, "'" + std::string(host) + "' is not an IPv6 address");
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') bad_url(source, text, "unexpected text after the IPv6 address");
      port = after.substr(1);
      if (port.empty()) bad_url(source, text, "an empty port");
    }
  } else {
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) bad_url(source, text, "an empty port");
    }
    if (host.empty()) bad_url(source, text, "no host");
    if (!is_host_name(host)) {
      bad_url(source, text, "'" + std::string(host) + "' is not a host name or IPv4 address");
    }
  }
  if (!port.empty()) {
    const auto value = number(port, 65535);
    if (!value || *value == 0) {
      bad_url(source, text, "the port '" + std::string(port) + "' is not a number from 1 to 65535");
    }
    address.port = static_cast<std::uint16_t>(*value);
  }
  address.host = std::string(host);
  return address;
}

}  // namespace tunekit
