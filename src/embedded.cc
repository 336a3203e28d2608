// The embedding API (include/vireo/server.h): a server on a thread of its own, with its own
// command table.
#include <future>
#include <thread>

#include "commands/build_command_table.h"
#include "server/server.h"
#include "vireo/server.h"

namespace vireo {

struct EmbeddedServer::Impl {
  EmbeddedOptions options;
  CommandTable commands = BuildCommandTable();
  std::unique_ptr<Server> server;
  std::thread thread;
};

EmbeddedServer::EmbeddedServer(EmbeddedOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

EmbeddedServer::~EmbeddedServer() { Stop(); }

std::string EmbeddedServer::Start() {
  const EmbeddedOptions& o = impl_->options;
  Config config;
  std::vector<std::string> args = o.args;
  args.insert(args.end(), {"--bind", o.bind, "--port", o.tcp ? "0" : "0"});
  if (!o.unix_socket.empty()) args.insert(args.end(), {"--unixsocket", o.unix_socket});
  if (std::string err = config.LoadCommandLine(args); !err.empty()) return err;
  if (std::string err = ApplyCommandRenames(config.values(), impl_->commands); !err.empty()) {
    return err;
  }
  impl_->server = std::make_unique<Server>(std::move(config), impl_->commands);
  impl_->server->set_listen_port(o.tcp ? (o.port == 0 ? -1 : o.port) : 0);
  if (std::string err = impl_->server->Listen(); !err.empty()) {
    impl_->server.reset();
    return err;
  }
  Server* server = impl_->server.get();
  impl_->thread = std::thread([server] { server->Run(); });
  return "";
}

void EmbeddedServer::Stop() {
  if (!impl_->server) return;
  impl_->server->RequestShutdown();
  if (impl_->thread.joinable()) impl_->thread.join();
  impl_->server.reset();
}

int EmbeddedServer::port() const { return impl_->server ? impl_->server->bound_port() : 0; }

}  // namespace vireo
