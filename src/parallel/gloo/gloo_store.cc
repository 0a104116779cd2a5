#include "parallel/gloo/gloo_store.h"

#include <utility>

namespace msrt::parallel {

GlooStore::GlooStore(std::shared_ptr<StoreClient> client, std::string prefix, std::chrono::milliseconds timeout)
    : client_(std::move(client)), prefix_(std::move(prefix)), timeout_(timeout) {}

void GlooStore::set(const std::string& key, const std::vector<char>& data) {
  client_->Set(Key(key), Bytes(data.begin(), data.end()));
}

std::vector<char> GlooStore::get(const std::string& key) {
  Bytes value = client_->Get(Key(key), timeout_);
  return {value.begin(), value.end()};
}

void GlooStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void GlooStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& key : keys) full.push_back(Key(key));
  client_->Wait(full, timeout);
}

}  // namespace msrt::parallel
