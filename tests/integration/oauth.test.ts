// OAuth 2.1 for MCP clients that only speak OAuth, against the built worker in Miniflare: the
// official TypeScript SDK's client discovers the server (RFC 9728, RFC 8414), registers
// (RFC 7591), is sent to the consent page with PKCE, and after the person's answer (given here
// through the consent page's API, as the page gives it; tests/browser/mcp.test.ts clicks the
// real page) exchanges the code and drives /mcp. Then what an attacker would try: a code
// replayed, a wrong verifier, another client's code, an unregistered redirect, `plain` PKCE,
// another resource, a refresh token used twice, revoked tokens, an expired one.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { ConsentRedirect, ConsentRequest, McpTokenList } from "../../protocol/ts/protocol.ts";
import { api, post } from "../support/clients.ts";
import { ownRuntime } from "../support/mimo.ts";
import { TestClient } from "../support/oauth.ts";
import type { Mimo } from "../support/mimo.ts";

let mimo: Mimo;

const REDIRECT = "http://127.0.0.1:9/oauth/callback";

function transport(client: TestClient): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`${mimo.url}/mcp`), { authProvider: client });
}

/** Follows the client's authorization URL as the person's browser does: to the consent page's request. */
async function consentPage(url: URL): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  assert.equal(res.status, 302, await res.clone().text());
  const page = new URL(res.headers.get("location")!, mimo.url);
  assert.equal(`${page.origin}${page.pathname}`, `${mimo.url}/`, "the web app");
  assert.ok(page.hash.startsWith("#/authorize?"), page.hash);
  return page.hash.slice("#/authorize?".length);
}

/** The person's answer on the consent page: where their browser is sent. */
async function answer(query: string, allow: boolean): Promise<URL> {
  const res = await post(mimo, `/api/oauth/authorize?${query}`, { allow });
  assert.equal(res.status, 200, await res.clone().text());
  return new URL(((await res.json()) as ConsentRedirect).redirectTo);
}

/** A client of the SDK authorized by the person; its connected MCP client. */
async function authorized(name: string): Promise<{ oauth: TestClient; client: Client; code: string }> {
  const oauth = new TestClient(name, REDIRECT);
  await assert.rejects(new Client({ name, version: "1.0.0" }).connect(transport(oauth)), UnauthorizedError);
  const query = await consentPage(oauth.authorizationUrl!);
  const back = await answer(query, true);
  assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
  assert.equal(back.searchParams.get("state"), "state-123");
  const code = back.searchParams.get("code")!;
  assert.match(code, /^mimo_oac_[0-9a-f]{64}$/);
  const first = transport(oauth);
  await first.finishAuth(code);
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(transport(oauth));
  return { oauth, client, code };
}

function form(fields: Record<string, string>): Promise<Response> {
  return fetch(`${mimo.url}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });
}

async function refused(res: Response, error: string): Promise<void> {
  assert.equal(res.status, 400);
  assert.equal(((await res.json()) as { error: string }).error, error);
}

/** A raw initialize with `token`: its HTTP status. */
async function initializeWith(token: string): Promise<number> {
  const res = await fetch(`${mimo.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } } }),
  });
  await res.body?.cancel();
  return res.status;
}

describe("OAuth 2.1 for MCP clients", () => {
  ownRuntime({ bindings: { MIMO_AUTH_MAX_FAILURES: "1000" } }, (m) => (mimo = m));

  it("serves its metadata, and an SDK client registers, is allowed by the person, and uses /mcp", async () => {
    const metadata = (await (await fetch(`${mimo.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(metadata.issuer, mimo.url);
    assert.deepEqual(metadata.code_challenge_methods_supported, ["S256"]);
    assert.equal(metadata.registration_endpoint, `${mimo.url}/oauth/register`);

    const { oauth, client } = await authorized("Claude Desktop");
    assert.match(oauth.saved!.access_token, /^mimo_oat_/);
    assert.equal(oauth.saved!.token_type, "Bearer");
    assert.ok(oauth.saved!.refresh_token);
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "browser_navigate"));
    // The grant is listed with the MCP tokens, without a secret.
    const listed = (await (await api(mimo, "/api/mcp/tokens")).json()) as McpTokenList;
    const grant = listed.tokens.find((t) => t.name === "Claude Desktop (OAuth)");
    assert.ok(grant, JSON.stringify(listed));
    assert.ok(!JSON.stringify(listed).includes(oauth.saved!.access_token));
    await client.close();
  });

  it("shows the person what the client asks, and a refusal sends the client away with nothing", async () => {
    const oauth = new TestClient("Cursor", REDIRECT);
    await assert.rejects(new Client({ name: "c", version: "1" }).connect(transport(oauth)), UnauthorizedError);
    const query = await consentPage(oauth.authorizationUrl!);
    const shown = (await (await api(mimo, `/api/oauth/authorize?${query}`)).json()) as ConsentRequest;
    assert.equal(shown.clientName, "Cursor");
    assert.equal(shown.redirectUri, REDIRECT);
    // Only the person (the deployment's token) answers; a client's own tokens cannot.
    assert.equal((await post(mimo, `/api/oauth/authorize?${query}`, { allow: true }, null)).status, 401);
    // Nor does another client the person allowed: its tokens open /mcp and nothing else.
    const insider = await authorized("Insider");
    for (const token of [insider.oauth.saved!.access_token, insider.oauth.saved!.refresh_token!]) {
      assert.equal((await post(mimo, `/api/oauth/authorize?${query}`, { allow: true }, token)).status, 401);
      assert.equal((await api(mimo, "/api/tasks", token)).status, 401);
      assert.equal((await api(mimo, "/api/mcp/tokens", token)).status, 401);
    }
    await insider.client.close();
    const back = await answer(query, false);
    assert.equal(back.searchParams.get("error"), "access_denied");
    assert.equal(back.searchParams.get("code"), null);
  });

  it("refuses a replayed code (and revokes what it gave), a wrong verifier, another client, and bad requests", async () => {
    const { oauth, client, code } = await authorized("Replayed");
    const clientId = oauth.info!.client_id;
    const accessToken = oauth.saved!.access_token;
    assert.equal(await initializeWith(accessToken), 200);
    // The code again (a stolen one): refused, and the tokens it gave are revoked.
    await refused(await form({ grant_type: "authorization_code", code, client_id: clientId, redirect_uri: REDIRECT, code_verifier: oauth.verifier }), "invalid_grant");
    assert.equal(await initializeWith(accessToken), 401);
    await client.close();

    // A code for one client: not with another's id, not without its verifier.
    const second = new TestClient("Second", REDIRECT);
    await assert.rejects(new Client({ name: "s", version: "1" }).connect(transport(second)), UnauthorizedError);
    const query = await consentPage(second.authorizationUrl!);
    const secondCode = (await answer(query, true)).searchParams.get("code")!;
    const exchange = (fields: Record<string, string>) =>
      form({ grant_type: "authorization_code", code: secondCode, client_id: second.info!.client_id, redirect_uri: REDIRECT, code_verifier: second.verifier, ...fields });
    await refused(await exchange({ client_id: clientId }), "invalid_grant");
    await refused(await exchange({ code_verifier: "x".repeat(43) }), "invalid_grant");
    await refused(await exchange({ redirect_uri: "http://127.0.0.1:9/other" }), "invalid_grant");
    await refused(await form({ grant_type: "password", username: "a", password: "b" }), "unsupported_grant_type");
    await refused(await form({ grant_type: "authorization_code" }), "invalid_request");

    // Authorization requests that are not the registered client's are shown, never redirected.
    const base = new URL(second.authorizationUrl!);
    const tampered = (name: string, value: string | null) => {
      const url = new URL(base);
      if (value === null) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
      return fetch(url, { redirect: "manual" });
    };
    for (const [name, value] of [["redirect_uri", "https://evil.example/cb"], ["client_id", "mcpc-00000000000000000000000000000000"]] as const) {
      const res = await tampered(name, value);
      assert.equal(res.status, 400, name);
      assert.equal(res.headers.get("location"), null);
    }
    // Errors of a known client go back to it, with its state.
    for (const [name, value, error] of [
      ["code_challenge_method", "plain", "invalid_request"],
      ["code_challenge", null, "invalid_request"],
      ["resource", "https://other.example/mcp", "invalid_target"],
    ] as const) {
      const res = await tampered(name, value);
      assert.equal(res.status, 302, name);
      const back = new URL(res.headers.get("location")!);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
      assert.equal(back.searchParams.get("error"), error);
      assert.equal(back.searchParams.get("state"), "state-123");
    }
    // Registration refuses redirects that could leak a code.
    for (const uri of ["http://evil.example/cb", "javascript:alert(1)", "https://ok.example/cb#x"]) {
      const res = await fetch(`${mimo.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: [uri] }) });
      await refused(res, "invalid_redirect_uri");
    }
  });

  it("refreshes once per refresh token, and revoking (a token, or the grant in the web app) ends access", async () => {
    const { oauth, client } = await authorized("Refresher");
    const clientId = oauth.info!.client_id;
    const first = oauth.saved!;
    const refresh = (token: string) => form({ grant_type: "refresh_token", refresh_token: token, client_id: clientId });
    const res = await refresh(first.refresh_token!);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const second = (await res.json()) as OAuthTokens;
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(await initializeWith(second.access_token), 200);
    // The used refresh token is spent.
    await refused(await refresh(first.refresh_token!), "invalid_grant");

    // RFC 7009: an access token revoked ends alone; the refresh token ends the grant.
    const revoke = (token: string) => fetch(`${mimo.url}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token }) });
    assert.equal((await revoke(first.access_token)).status, 200);
    assert.equal(await initializeWith(first.access_token), 401);
    assert.equal(await initializeWith(second.access_token), 200);
    assert.equal((await revoke(second.refresh_token!)).status, 200);
    assert.equal(await initializeWith(second.access_token), 401);
    await refused(await refresh(second.refresh_token!), "invalid_grant");
    assert.equal((await revoke("nonsense")).status, 200, "nothing to revoke is not an error");
    await client.close();

    // The person revokes a client in the web app: its tokens stop at once.
    const other = await authorized("Revoked in the app");
    const listed = (await (await api(mimo, "/api/mcp/tokens")).json()) as McpTokenList;
    const grant = listed.tokens.find((t) => t.name === "Revoked in the app (OAuth)")!;
    const revoked = await fetch(`${mimo.url}/api/mcp/tokens/${grant.id}`, { method: "DELETE", headers: { authorization: `Bearer ${mimo.token}` } });
    assert.equal(revoked.status, 204);
    assert.equal(await initializeWith(other.oauth.saved!.access_token), 401);
    await refused(await refresh(other.oauth.saved!.refresh_token!), "invalid_grant");
    await other.client.close();
  });
});
