// Preloaded with `node --import ./loopback.mjs ...` by client-run.sh: makes a server that
// calls `listen(port)` without a host (server-everything's `app.listen(PORT)` binds every
// interface) listen on 127.0.0.1 only. Listening on a path or an explicit host is untouched.

import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") {
      args.splice(1, 0, "127.0.0.1");
    }
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
