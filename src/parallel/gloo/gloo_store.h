// Gloo's rendezvous Store interface over msrt's store client.
#pragma once

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "parallel/store.h"

namespace msrt::parallel {

/// Keys are `prefix + "/" + key`, so groups (and jobs) sharing one store
/// server never see each other's keys. Reads wait up to `timeout`.
class GlooStore : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<StoreClient> client, std::string prefix, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

 private:
  std::string Key(const std::string& key) const { return prefix_ + "/" + key; }

  std::shared_ptr<StoreClient> client_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

}  // namespace msrt::parallel
