// Which sites Mimo may act on. The manifest asks for no host access up front, only for
// `<all_urls>` as an optional host permission: the person grants sites one by one from the side
// panel ("Allow Mimo on <site>") or all at once in the options, and can take any back. Chrome
// enforces the grant for content scripts and `scripting`; CDP (`chrome.debugger`) and messages
// to content scripts already in a page are not gated by Chrome, so every action checks here too.
import { siteNotAllowed, siteOf, sitePattern } from "./guard.ts";

/** The optional permission that grants every site. */
export const ALL_SITES = "<all_urls>";
/** Sites an action was refused on, newest last, for the side panel to offer: `{site: at}`. */
export const SITE_REQUESTS_KEY = "siteRequests";
const MAX_REQUESTS = 20;
/** The content script, registered rather than declared so it only runs where access is granted. */
const CONTENT_SCRIPT_ID = "mimo-content";

export type SiteRequests = Record<string, number>;

/** Whether Mimo may act on `url`'s site; pages that are not web pages (about:blank) have none. */
export async function siteAllowed(url: string): Promise<boolean> {
  const site = siteOf(url);
  return site === null || chrome.permissions.contains({ origins: [sitePattern(site)] });
}

/** Throws `PERMISSION_DENIED` for a site the person has not allowed, and lists it for the side panel. */
export async function requireSite(url: string): Promise<void> {
  if (await siteAllowed(url)) return;
  const site = siteOf(url)!;
  const stored = (await chrome.storage.local.get(SITE_REQUESTS_KEY))[SITE_REQUESTS_KEY] as SiteRequests | undefined;
  const requests = { ...(stored ?? {}) };
  delete requests[site];
  requests[site] = Date.now();
  const sites = Object.keys(requests);
  for (const old of sites.slice(0, Math.max(0, sites.length - MAX_REQUESTS))) delete requests[old];
  await chrome.storage.local.set({ [SITE_REQUESTS_KEY]: requests });
  throw siteNotAllowed(site);
}

/** Drops the requests for sites that are allowed now. */
export async function forgetAllowedRequests(): Promise<void> {
  const stored = (await chrome.storage.local.get(SITE_REQUESTS_KEY))[SITE_REQUESTS_KEY] as SiteRequests | undefined;
  if (stored === undefined) return;
  const open: SiteRequests = {};
  for (const [site, at] of Object.entries(stored)) if (!(await siteAllowed(site))) open[site] = at;
  await chrome.storage.local.set({ [SITE_REQUESTS_KEY]: open });
}

/**
 * Registers the content script for every frame of every page; Chrome injects it only where a
 * site is granted, at each load, as it did for the manifest's static script. Registrations
 * persist across browser sessions, so this only registers when it is missing.
 */
export async function ensureContentScript(): Promise<void> {
  const existing = await chrome.scripting.getRegisteredContentScripts({ ids: [CONTENT_SCRIPT_ID] });
  if (existing.length > 0) return;
  await chrome.scripting
    .registerContentScripts([
      { id: CONTENT_SCRIPT_ID, js: ["content.js"], matches: [ALL_SITES], allFrames: true, matchOriginAsFallback: true, runAt: "document_idle", persistAcrossSessions: true },
    ])
    .catch((error: unknown) => {
      // Two starts of the worker racing: the other one registered it.
      if (!/duplicate/i.test(error instanceof Error ? error.message : String(error))) throw error;
    });
}
