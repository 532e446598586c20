// An OAuth 2.1 authorization server for the interop tests (`tests/tests/peers_oauth.rs`):
// oidc-provider (pinned in xtask/src/peers.rs), in memory, on 127.0.0.1 only.
//
// Usage: node oidc-as.mjs PORT RESOURCE NODE_MODULES
//
// NODE_MODULES is the provisioned `target/peers/npm/node_modules` (an ES module does not search
// NODE_PATH, so the package is imported from there by path).
//
// - Dynamic client registration, open (no initial access token); clients default to public
//   (`token_endpoint_auth_method: none`); native clients may use loopback redirect URIs.
// - Resource indicators (RFC 8707): the one resource server is RESOURCE (the MCP server's URL);
//   its access tokens are JWTs (signed with the provider's development keys, published at
//   /jwks) whose audience is RESOURCE, with the scope `mcp:tools`, valid for 30 s.
// - PKCE is required (S256 only). A refresh token is issued to every client allowed the
//   refresh_token grant.
// - devInteractions: the provider's own login page (any login, any password) and consent page.
// - Every registration, token issue and refresh is logged as one `event: NAME` line on stdout.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [port, resource, nodeModules] = process.argv.slice(2);
if (!port || !resource || !nodeModules) {
  console.error('usage: node oidc-as.mjs PORT RESOURCE NODE_MODULES');
  process.exit(2);
}
const entry = join(nodeModules, 'oidc-provider', 'lib', 'index.js');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);
const issuer = `http://127.0.0.1:${port}`;
const SCOPE = 'mcp:tools';

const configuration = {
  clients: [],
  clientDefaults: {
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  scopes: ['openid', 'offline_access', SCOPE],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return { scope: SCOPE, audience: resource, accessTokenTTL: 30, accessTokenFormat: 'jwt' };
      },
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: { AccessToken: 30, AuthorizationCode: 60, Interaction: 300, Session: 600, Grant: 600, RefreshToken: 600 },
};

const provider = new Provider(issuer, configuration);
for (const event of ['registration_create.success', 'grant.success', 'grant.error', 'authorization.success']) {
  provider.on(event, (ctx) => {
    const grant = ctx?.oidc?.params?.grant_type;
    console.log(`event: ${event}${grant ? ` ${grant}` : ''}`);
  });
}
provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`oidc-as: issuer ${issuer}, resource ${resource}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
