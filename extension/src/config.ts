// Pure helpers for the extension's settings: the server address, the socket URL, the client id,
// and how this browser describes itself in `hello`. No Chrome APIs here.
import type { BrowserInfo } from "../../protocol/ts/protocol.ts";

/** What the server accepts as a client id (see `valid_client_id` in the registry). */
const CLIENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isValidClientId(id: unknown): id is string {
  return typeof id === "string" && CLIENT_ID.test(id);
}

export type ServerUrlCheck = { ok: true; url: string } | { ok: false; error: string };

/**
 * Checks a server address as a person types it: an http(s) origin, optionally with a path
 * prefix. A ws(s) address is accepted and stored as its http(s) equivalent.
 */
export function normalizeServerUrl(input: string): ServerUrlCheck {
  const trimmed = input.trim();
  if (trimmed === "") return { ok: false, error: "Enter the server address, e.g. http://127.0.0.1:8787" };
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return { ok: false, error: `"${trimmed}" is not a URL; use e.g. http://127.0.0.1:8787` };
  }
  const scheme = { "http:": "http:", "https:": "https:", "ws:": "http:", "wss:": "https:" }[url.protocol];
  if (scheme === undefined) return { ok: false, error: `The server address must start with http:// or https://` };
  if (url.search !== "" || url.hash !== "") return { ok: false, error: "The server address must not have a query or fragment" };
  url.protocol = scheme;
  if (scheme === "http:" && !onThisComputer(url.hostname)) {
    return { ok: false, error: `Use https:// for a server that is not on this computer: over http://, anyone on the way could read this browser's credential and everything Mimo sees (http:// is for localhost only)` };
  }
  return { ok: true, url: url.href.replace(/\/+$/, "") };
}

/** Whether a host is this computer (loopback), the one place plain http keeps traffic private. */
function onThisComputer(hostname: string): boolean {
  const host = hostname.replace(/\.+$/, "").toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The extension's socket endpoint on the server at `serverUrl` (as `normalizeServerUrl`
 * returns it), opened with a single-use `ticket` from `POST /api/ws-ticket`.
 */
export function extensionSocketUrl(serverUrl: string, clientId: string, ticket: string): string {
  const url = new URL(`${serverUrl.replace(/\/+$/, "")}/ws/extension`);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = new URLSearchParams({ clientId, ticket }).toString();
  return url.href;
}

export type Brand = { brand: string; version: string };

/** `navigator.userAgentData` (not in TypeScript's DOM library). */
export type UserAgentData = {
  brands: ReadonlyArray<Brand>;
  platform: string;
  getHighEntropyValues(hints: string[]): Promise<{ fullVersionList?: ReadonlyArray<Brand> }>;
};

/** Branded browsers first: Chromium-based browsers list "Chromium" next to their own brand. */
const KNOWN_BRANDS = ["Google Chrome", "Microsoft Edge", "Opera", "Brave", "Vivaldi", "YaBrowser", "Chromium"];

/** UA-string tokens, most specific first, with the name each stands for. */
const UA_TOKENS: Array<[RegExp, string]> = [
  [/\bEdg\/([\d.]+)/, "Microsoft Edge"],
  [/\bOPR\/([\d.]+)/, "Opera"],
  [/\bYaBrowser\/([\d.]+)/, "YaBrowser"],
  [/\bHeadlessChrome\/([\d.]+)/, "Chromium"],
  [/\bChromium\/([\d.]+)/, "Chromium"],
  [/\bChrome\/([\d.]+)/, "Google Chrome"],
];

/**
 * Names this browser for `hello`. `brands` are the UA client hints, best the high-entropy
 * `fullVersionList` (the UA string's version is reduced to `156.0.0.0`); the deliberately fake
 * "GREASE" brands are skipped by only taking known names. The UA string is the fallback.
 */
export function browserInfo(brands: ReadonlyArray<Brand> | undefined, userAgent: string): BrowserInfo {
  const known = KNOWN_BRANDS.map((name) => brands?.find((b) => b.brand === name)).find((b) => b !== undefined);
  if (known !== undefined) return { name: known.brand, version: known.version, userAgent };
  for (const [re, name] of UA_TOKENS) {
    const version = re.exec(userAgent)?.[1];
    if (version !== undefined) return { name, version, userAgent };
  }
  return { name: "Unknown browser", version: "", userAgent };
}

/** The operating system, for the default name ("Chromium on Linux"). */
export function platformName(uaData: UserAgentData | undefined, userAgent: string): string {
  if (uaData !== undefined && uaData.platform !== "") return uaData.platform;
  const platforms: Array<[RegExp, string]> = [
    [/Android/, "Android"],
    [/CrOS/, "ChromeOS"],
    [/Windows/, "Windows"],
    [/Mac OS X|Macintosh/, "macOS"],
    [/Linux|X11/, "Linux"],
  ];
  return platforms.find(([re]) => re.test(userAgent))?.[1] ?? "an unknown system";
}

/** The name shown in the web app until the person picks one. */
export function defaultName(browser: BrowserInfo, platform: string): string {
  return `${browser.name} on ${platform}`;
}
