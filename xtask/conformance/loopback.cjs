'use strict';
// Loaded into the conformance suite's Node process by `cargo xtask conformance`
// (NODE_OPTIONS=--require <absolute path of this file>).
//
// The suite's mock servers call `listen(0)` without a host, which binds every interface. Here a
// TCP listen whose address is missing or a wildcard binds 127.0.0.1 instead, so that nothing the
// suite starts is reachable from outside this machine.
//
// The hook sits on `Server.prototype._listen2`, the step where Node creates the listening handle
// once the address is known. Passing a host to `listen()` instead would make Node resolve it
// first, so `server.address()` would be null right after `listen()` returns, and the suite reads
// the port at exactly that moment. Inherited file descriptors and handles are left alone.

const net = require('node:net');

const LOOPBACK = { address: '127.0.0.1', family: 4 };
const WILDCARDS = ['::', '0.0.0.0'];

const createListenHandle = net.Server.prototype._listen2;
if (typeof createListenHandle !== 'function') {
  throw new Error('loopback.cjs: this Node has no net.Server.prototype._listen2 to hook');
}

function bindsEveryInterface(address, fd) {
  const inheritsDescriptor = typeof fd === 'number' && fd >= 0;
  return !inheritsDescriptor && (!address || WILDCARDS.includes(address));
}

net.Server.prototype._listen2 = function listenOnLoopback(address, port, addressType, ...rest) {
  const [, fd] = rest; // rest = [backlog, fd, flags]
  if (bindsEveryInterface(address, fd)) {
    return createListenHandle.call(this, LOOPBACK.address, port, LOOPBACK.family, ...rest);
  }
  return createListenHandle.call(this, address, port, addressType, ...rest);
};
