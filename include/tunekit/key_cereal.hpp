// cereal serialization of every Hana-reflected struct (a key): one named value per field. Apart
// from key.hpp so that a key's users do not parse cereal.
#pragma once

#include <boost/hana/accessors.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <cereal/cereal.hpp>

#include "tunekit/key.hpp"

namespace cereal {

/// cereal serialization for every Hana-reflected struct: one named value per field.
/// (Found through the archive's namespace, so user structs need no code of their own.)
template <class Archive, tunekit::ReflectedStruct K>
void serialize(Archive& archive, K& key) {
  boost::hana::for_each(boost::hana::accessors<K>(), [&](auto accessor) {
    archive(cereal::make_nvp(boost::hana::to<const char*>(boost::hana::first(accessor)),
                             boost::hana::second(accessor)(key)));
  });
}

}  // namespace cereal
