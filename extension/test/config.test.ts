import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { browserInfo, defaultName, extensionSocketUrl, isValidClientId, normalizeServerUrl, platformName } from "../src/config.ts";

const HEADLESS_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";
const CHROME_WIN_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

describe("server address", () => {
  it("accepts http(s) origins and path prefixes, without a trailing slash", () => {
    assert.deepEqual(normalizeServerUrl("http://127.0.0.1:8787"), { ok: true, url: "http://127.0.0.1:8787" });
    assert.deepEqual(normalizeServerUrl("  https://mimo.example.com/  "), { ok: true, url: "https://mimo.example.com" });
    assert.deepEqual(normalizeServerUrl("https://example.com/mimo/"), { ok: true, url: "https://example.com/mimo" });
  });

  it("stores a ws(s) address as its http(s) equivalent", () => {
    assert.deepEqual(normalizeServerUrl("ws://localhost:8787"), { ok: true, url: "http://localhost:8787" });
    assert.deepEqual(normalizeServerUrl("wss://mimo.example.com"), { ok: true, url: "https://mimo.example.com" });
  });

  it("refuses what is not a usable server address, saying why", () => {
    for (const bad of ["", "   ", "127.0.0.1:8787x", "localhost", "ftp://example.com", "http://example.com/?a=1", "http://example.com/#x"]) {
      const result = normalizeServerUrl(bad);
      assert.equal(result.ok, false, bad);
      assert.ok(!result.ok && result.error.length > 0);
    }
  });

  it("takes plain http only for this computer: any other server needs https", () => {
    for (const local of ["http://localhost:8787", "http://mimo.localhost", "http://127.0.0.1:8787", "http://127.9.8.7", "http://[::1]:8787", "ws://LOCALHOST.:8787"]) {
      assert.equal(normalizeServerUrl(local).ok, true, local);
    }
    for (const remote of ["http://mimo.example.com", "ws://mimo.example.com", "http://192.168.1.5:8787", "http://10.0.0.1", "http://[::2]", "http://localhost.example.com", "http://127.0.0.1.nip.io", "http://0x7f000001.example"]) {
      const result = normalizeServerUrl(remote);
      assert.equal(result.ok, false, remote);
      assert.match(!result.ok ? result.error : "", /https:\/\//);
    }
    assert.equal(normalizeServerUrl("https://192.168.1.5:8787").ok, true);
  });

  it("builds the socket URL with the client id and the ticket, escaped", () => {
    assert.equal(extensionSocketUrl("http://127.0.0.1:8787", "abc-1", "t"), "ws://127.0.0.1:8787/ws/extension?clientId=abc-1&ticket=t");
    assert.equal(
      extensionSocketUrl("https://example.com/mimo", "abc_2", "a b&c=d"),
      "wss://example.com/mimo/ws/extension?clientId=abc_2&ticket=a+b%26c%3Dd",
    );
    const parsed = new URL(extensionSocketUrl("https://example.com/mimo", "x", "a b&c=d"));
    assert.equal(parsed.searchParams.get("ticket"), "a b&c=d");
  });
});

describe("client id", () => {
  it("takes what the server takes: 1–128 letters, digits, '-' and '_'", () => {
    assert.ok(isValidClientId("3c3a898d-9d41-475a-90a4-c77195e2470b"));
    assert.ok(isValidClientId(crypto.randomUUID()));
    assert.ok(isValidClientId("a_B-9"));
    assert.ok(isValidClientId("x".repeat(128)));
    for (const bad of ["", "x".repeat(129), "../etc", "a b", "ä", 42, undefined, null]) assert.equal(isValidClientId(bad), false, String(bad));
  });
});

describe("browser identity", () => {
  it("takes the known brand with the full version, skipping GREASE brands", () => {
    const fullVersionList = [
      { brand: "Not:A-Brand", version: "8.0.0.0" },
      { brand: "Chromium", version: "156.0.8078.79" },
    ];
    assert.deepEqual(browserInfo(fullVersionList, HEADLESS_UA), { name: "Chromium", version: "156.0.8078.79", userAgent: HEADLESS_UA });
  });

  it("names the branded browser rather than the Chromium it is built on", () => {
    const brands = [
      { brand: "Chromium", version: "131" },
      { brand: "Not_A Brand", version: "24" },
      { brand: "Google Chrome", version: "131" },
    ];
    assert.deepEqual(browserInfo(brands, CHROME_WIN_UA), { name: "Google Chrome", version: "131", userAgent: CHROME_WIN_UA });
    const edge = [...brands.slice(0, 2), { brand: "Microsoft Edge", version: "131" }];
    assert.equal(browserInfo(edge, CHROME_WIN_UA).name, "Microsoft Edge");
  });

  it("falls back to the UA string without client hints", () => {
    assert.deepEqual(browserInfo(undefined, HEADLESS_UA), { name: "Chromium", version: "156.0.0.0", userAgent: HEADLESS_UA });
    assert.equal(browserInfo([], `${CHROME_WIN_UA} Edg/131.0.2903.70`).name, "Microsoft Edge");
    assert.equal(browserInfo([], `${CHROME_WIN_UA} Edg/131.0.2903.70`).version, "131.0.2903.70");
    assert.deepEqual(browserInfo(undefined, "curl/8"), { name: "Unknown browser", version: "", userAgent: "curl/8" });
  });

  it("names the system and builds the default name from both", () => {
    assert.equal(platformName({ brands: [], platform: "Linux", getHighEntropyValues: async () => ({}) }, ""), "Linux");
    assert.equal(platformName(undefined, HEADLESS_UA), "Linux");
    assert.equal(platformName(undefined, CHROME_WIN_UA), "Windows");
    assert.equal(platformName(undefined, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7)"), "macOS");
    assert.equal(platformName(undefined, "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0)"), "ChromeOS");
    assert.equal(defaultName(browserInfo(undefined, HEADLESS_UA), "Linux"), "Chromium on Linux");
  });
});
