// The store URL (Settings::store, TUNEKIT_STORE): redis://[user@]host[:port][/db][?prefix=p],
// checked strictly.
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
                          "; expected redis://[USER@]HOST[:PORT][/DB][?prefix=PREFIX], e.g. "
                          "redis://127.0.0.1:6379/0");
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

/// A user name or key prefix: letters, digits and - _ . : (no glob character: a prefix is part
/// of SCAN patterns), 1 to `max` characters.
bool is_name(std::string_view text, std::size_t max) {
  if (text.empty() || text.size() > max) return false;
  for (char c : text) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  }
  return true;
}

}  // namespace

std::string StoreAddress::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(scheme) + (user.empty() ? "" : user + "@") + (v6 ? "[" + host + "]" : host) +
         ":" + std::to_string(port) + "/" + std::to_string(db) +
         (prefix.empty() ? "" : "?prefix=" + prefix);
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
  StoreAddress address;
  if (rest.find('#') != std::string_view::npos) bad_url(source, text, "it has a fragment");
  if (const auto query = rest.find('?'); query != std::string_view::npos) {
    const std::string_view parameter = rest.substr(query + 1);
    rest = rest.substr(0, query);
    constexpr std::string_view name = "prefix=";
    if (!parameter.starts_with(name)) {
      bad_url(source, text, "the only query it may have is ?prefix=PREFIX");
    }
    address.prefix = std::string(parameter.substr(name.size()));
    // tunekit's own keys begin with "tunekit:v": a prefix holding it could make one store's
    // SCAN patterns match another's keys.
    if (address.prefix.find("tunekit:v") != std::string::npos) {
      bad_url(source, text, "a prefix may not hold 'tunekit:v' (tunekit's own key names)");
    }
    if (!is_name(address.prefix, max_store_prefix)) {
      bad_url(source, text,
              "the prefix '" + address.prefix + "' is not 1 to " +
                  std::to_string(max_store_prefix) + " letters, digits and - _ . :");
    }
  }
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view user = rest.substr(0, at);
    if (user.find(':') != std::string_view::npos) {
      bad_url(source, text,
              "a password in the URL is not supported (it would show in logs and process "
              "listings): set TUNEKIT_STORE_PASSWORD (or Settings::store_password) instead");
    }
    if (!is_name(user, max_store_user)) {
      bad_url(source, text,
              "the user '" + std::string(user) + "' is not 1 to " + std::to_string(max_store_user) +
                  " letters, digits and - _ .");
    }
    address.user = std::string(user);
    rest = rest.substr(at + 1);
  }
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
