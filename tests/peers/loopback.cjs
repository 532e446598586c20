// Preloaded with `node --require` by the HTTP interop tests (tests/tests/peers_http.rs): a server
// that listens without naming a host (`app.listen(PORT)`, which binds every interface) is put on
// 127.0.0.1 instead, so that no peer started by the tests is reachable from outside the machine.
// A listen() on a named host, a pipe or an inherited handle is left alone.
'use strict';
const net = require('net');
const listen2 = net.Server.prototype._listen2;
net.Server.prototype._listen2 = function (address, port, addressType, backlog, fd, flags) {
  const anyHost = address == null || address === '' || address === '::' || address === '0.0.0.0';
  if ((fd === undefined || fd === null || fd < 0) && anyHost) {
    address = '127.0.0.1';
    addressType = 4;
  }
  return listen2.call(this, address, port, addressType, backlog, fd, flags);
};
