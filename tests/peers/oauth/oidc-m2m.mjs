// An OAuth authorization server for machine-to-machine clients, for the interop test
// `tests/tests/peers_oauth_m2m.rs`: oidc-provider (pinned in xtask/src/peers.rs), in memory, on
// 127.0.0.1 only.
//
// Usage: node oidc-m2m.mjs PORT RESOURCE NODE_MODULES CLIENT_ID CLIENT_JWKS_FILE [TOKEN_TTL]
//
// NODE_MODULES is the provisioned `target/peers/npm/node_modules` (an ES module does not search
// NODE_PATH, so the package is imported from there by path). CLIENT_JWKS_FILE holds the public
// JWKS (`{"keys": [...]}`) of the one client, written by the test.
//
// - One static client, CLIENT_ID: the client credentials grant only, authenticated with
//   `private_key_jwt` (ES256) against CLIENT_JWKS_FILE's keys; its scope is `mcp:tools`. No
//   dynamic registration, no login pages.
// - DPoP (RFC 9449): proofs with ES256 (advertised as `dpop_signing_alg_values_supported`), and
//   a nonce required at the token endpoint (the first token request is answered
//   `use_dpop_nonce`). The access token is bound to the proof's key (`token_type: DPoP`, and
//   `cnf.jkt` in the JWT).
// - Resource indicators (RFC 8707): the one resource server is RESOURCE (the MCP server's URL);
//   its access tokens are JWTs (signed with the provider's development keys, published at
//   /jwks) whose audience is RESOURCE, with the scope `mcp:tools`, valid for TOKEN_TTL seconds
//   (default 300).
// - Every token issue and refusal is logged as one `event: NAME` line on stdout (errors with
//   their OAuth error code and the provider's detail, never a token or an assertion).

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [port, resource, nodeModules, clientId, jwksFile, ttlArg] = process.argv.slice(2);
if (!port || !resource || !nodeModules || !clientId || !jwksFile) {
  console.error('usage: node oidc-m2m.mjs PORT RESOURCE NODE_MODULES CLIENT_ID CLIENT_JWKS_FILE [TOKEN_TTL]');
  process.exit(2);
}
const entry = join(nodeModules, 'oidc-provider', 'lib', 'index.js');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);
const issuer = `http://127.0.0.1:${port}`;
const SCOPE = 'mcp:tools';
const jwks = JSON.parse(readFileSync(jwksFile, 'utf8'));
const TTL = Number(ttlArg ?? 300);

const configuration = {
  clients: [
    {
      client_id: clientId,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'private_key_jwt',
      token_endpoint_auth_signing_alg: 'ES256',
      scope: SCOPE,
      jwks,
    },
  ],
  scopes: [SCOPE],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    dPoP: {
      enabled: true,
      nonceSecret: randomBytes(32),
      requireNonce: () => true,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) {
          throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        }
        return { scope: SCOPE, audience: resource, accessTokenTTL: TTL, accessTokenFormat: 'jwt' };
      },
    },
  },
  enabledJWA: { dPoPSigningAlgValues: ['ES256'] },
  ttl: { ClientCredentials: TTL },
};

const provider = new Provider(issuer, configuration);
provider.on('grant.success', (ctx) => {
  const grant = ctx?.oidc?.params?.grant_type;
  const dpop = ctx?.oidc?.entities?.ClientCredentials?.jkt ? ' dpop' : '';
  console.log(`event: grant.success ${grant}${dpop}`);
});
provider.on('grant.error', (ctx, error) => {
  const detail = error?.error_detail ? ` (${error.error_detail})` : '';
  console.log(`event: grant.error ${error?.error ?? 'unknown'}${detail}`);
});
provider.listen(Number(port), '127.0.0.1', () => {
  console.log(`oidc-m2m: issuer ${issuer}, resource ${resource}, client ${clientId}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
