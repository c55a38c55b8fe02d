// InsertOnlyMap: the tuner's in-memory cache. Readers never lock and never allocate; writers are
// serialised by the caller. Entries are never freed while the map lives, which is what lets a
// reader hold a pointer without a lock: a tuner holds one entry per tuned key, so this is cheap.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace tunekit::detail {

template <class Key, class Value, class Hash, class Equal>
class InsertOnlyMap {
 public:
  InsertOnlyMap() { publish(std::make_unique<Table>(initial_buckets)); }
  InsertOnlyMap(const InsertOnlyMap&) = delete;
  InsertOnlyMap& operator=(const InsertOnlyMap&) = delete;

  /// The newest value stored for `key`, or nullptr. Wait-free; valid while the map lives.
  const Value* find(const Key& key, std::size_t hash) const noexcept {
    const Table* table = current_.load(std::memory_order_acquire);
    for (const Node* node = table->buckets[hash & table->mask].load(std::memory_order_acquire);
         node != nullptr; node = node->next) {
      if (node->hash == hash && Equal{}(node->key, key)) return &node->value;
    }
    return nullptr;
  }
  const Value* find(const Key& key) const noexcept { return find(key, Hash{}(key)); }

  /// Stores `value` for `key`, shadowing an older value. Callers must serialise writers.
  const Value* insert(const Key& key, Value value) {
    const std::size_t hash = Hash{}(key);
    Table* table = current_.load(std::memory_order_relaxed);
    if (find(key, hash) == nullptr && ++size_ > table->mask + 1) table = grow(*table);
    return link(*table, std::make_unique<Node>(hash, key, std::move(value)));
  }

  /// Forgets every key. Old entries stay allocated (a reader may still hold one) until the map
  /// is destroyed.
  void clear() {
    publish(std::make_unique<Table>(initial_buckets));
    size_ = 0;
  }

  std::size_t size() const noexcept { return size_; }

  /// Calls f(key, value) for the newest value of each key. Callers must serialise with writers.
  template <class F>
  void for_each(F&& f) const {
    const Table* table = current_.load(std::memory_order_acquire);
    for (std::size_t b = 0; b <= table->mask; ++b) {
      for (const Node* node = table->buckets[b].load(std::memory_order_acquire); node;
           node = node->next) {
        if (find(node->key, node->hash) == &node->value) f(node->key, node->value);
      }
    }
  }

 private:
  static constexpr std::size_t initial_buckets = 64;

  struct Node {
    Node(std::size_t h, const Key& k, Value v) : hash(h), key(k), value(std::move(v)) {}
    std::size_t hash;
    Key key;
    Value value;
    Node* next = nullptr;
  };
  struct Table {
    explicit Table(std::size_t buckets_count)
        : mask(buckets_count - 1), buckets(new std::atomic<Node*>[buckets_count]) {
      for (std::size_t i = 0; i < buckets_count; ++i) buckets[i].store(nullptr);
    }
    std::size_t mask;
    std::unique_ptr<std::atomic<Node*>[]> buckets;
  };

  const Value* link(Table& table, std::unique_ptr<Node> node) {
    auto& bucket = table.buckets[node->hash & table.mask];
    node->next = bucket.load(std::memory_order_relaxed);
    Node* raw = node.get();
    nodes_.push_back(std::move(node));
    bucket.store(raw, std::memory_order_release);
    return &raw->value;
  }

  // Readers may be walking the old table: it is copied, not relinked, and kept.
  Table* grow(const Table& old) {
    auto bigger = std::make_unique<Table>((old.mask + 1) * 2);
    for (std::size_t b = 0; b <= old.mask; ++b) {
      std::vector<const Node*> chain;
      for (const Node* n = old.buckets[b].load(std::memory_order_relaxed); n; n = n->next) {
        chain.push_back(n);
      }
      // Oldest first, so that the newest value of a key ends up in front.
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        link(*bigger, std::make_unique<Node>((*it)->hash, (*it)->key, (*it)->value));
      }
    }
    return publish(std::move(bigger));
  }

  Table* publish(std::unique_ptr<Table> table) {
    Table* raw = table.get();
    tables_.push_back(std::move(table));
    current_.store(raw, std::memory_order_release);
    return raw;
  }

  std::atomic<Table*> current_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::size_t size_ = 0;
};

}  // namespace tunekit::detail
