// The "Site access" part of the side panel and of the options page: allow Mimo on a site (the
// current tab's, or one a task was refused on), on all sites, and take access back.
//
// `chrome.permissions.request` only works during a user gesture, so it is called right in the
// click handlers, before anything is awaited; Chrome then asks the person in its own dialog.
import { siteOf, sitePattern } from "./guard.ts";
import { ALL_SITES, SITE_REQUESTS_KEY } from "./site-access.ts";
import type { SiteRequests } from "./site-access.ts";

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function allowButton(site: string, report: (text: string) => void): HTMLButtonElement {
  const button = el("button", { type: "button", textContent: `Allow Mimo on ${site}` });
  button.addEventListener("click", () => {
    chrome.permissions.request({ origins: [sitePattern(site)] }).then(
      (granted) => report(granted ? `Mimo may act on ${site} now.` : `Mimo was not allowed on ${site}.`),
      (error: unknown) => report(`Cannot ask for ${site}: ${error instanceof Error ? error.message : String(error)}`),
    );
  });
  return button;
}

function revokeButton(patterns: string[], label: string, report: (text: string) => void): HTMLButtonElement {
  const button = el("button", { type: "button", textContent: label });
  button.addEventListener("click", () => {
    chrome.permissions.remove({ origins: patterns }).catch((error: unknown) => report(`Cannot revoke: ${error instanceof Error ? error.message : String(error)}`));
  });
  return button;
}

/**
 * Fills `root` with the site access controls and keeps them live. With `currentTab`, the site of
 * the window's active tab is offered first (the side panel's case).
 */
export function mountSiteAccess(root: HTMLElement, options: { currentTab: boolean }): void {
  const status = el("p", { className: "site-status", role: "status" });
  const report = (text: string) => (status.textContent = text);
  const current = el("div", { className: "site-current" });
  const all = el("input", { type: "checkbox", id: "site-all" });
  const requests = el("ul", { id: "site-requests" });
  const granted = el("ul", { id: "site-granted" });
  root.replaceChildren(
    current,
    el("label", { className: "site-all" }, all, " Allow Mimo on all sites"),
    el("h3", {}, "Asked for by a task"),
    requests,
    el("h3", {}, "Allowed sites"),
    granted,
    status,
  );
  all.addEventListener("change", () => {
    // Unticked until Chrome says it is granted (the render after onAdded ticks it).
    const wanted = all.checked;
    all.checked = !wanted;
    const change = wanted ? chrome.permissions.request({ origins: [ALL_SITES] }) : chrome.permissions.remove({ origins: [ALL_SITES] });
    change.then(
      (done) => report(wanted ? (done ? "Mimo may act on every site now." : "Mimo was not allowed on all sites.") : "Mimo no longer has access to every site."),
      (error: unknown) => report(`Cannot change access to all sites: ${error instanceof Error ? error.message : String(error)}`),
    );
  });

  const render = async () => {
    const [perms, stored, tab] = await Promise.all([
      chrome.permissions.getAll(),
      chrome.storage.local.get(SITE_REQUESTS_KEY),
      options.currentTab ? chrome.tabs.query({ active: true, currentWindow: true }).then((tabs) => tabs[0]) : Promise.resolve(undefined),
    ]);
    const origins = perms.origins ?? [];
    const everySite = origins.includes(ALL_SITES);
    all.checked = everySite;
    const allowed = async (site: string) => chrome.permissions.contains({ origins: [sitePattern(site)] });

    const site = tab?.url !== undefined ? siteOf(tab.url) : null;
    if (site === null) current.replaceChildren();
    else if (await allowed(site)) current.replaceChildren(el("p", {}, `Mimo may act on ${site}.`));
    else current.replaceChildren(el("p", {}, `Mimo may not act on ${site}. `), allowButton(site, report));

    const asked = Object.keys((stored[SITE_REQUESTS_KEY] as SiteRequests | undefined) ?? {}).reverse();
    const open: string[] = [];
    for (const s of asked) if (!(await allowed(s))) open.push(s);
    requests.replaceChildren(...(open.length === 0 ? [el("li", { className: "muted", textContent: "None" })] : open.map((s) => el("li", {}, allowButton(s, report)))));

    const sites = origins.filter((o) => o !== ALL_SITES);
    const rows = sites.map((pattern) => el("li", {}, `${pattern.replace(/\/\*$/, "")} `, revokeButton([pattern], `Revoke ${pattern.replace(/\/\*$/, "")}`, report)));
    if (everySite) rows.unshift(el("li", {}, "Every site ", revokeButton([ALL_SITES], "Revoke all sites", report)));
    granted.replaceChildren(...(rows.length === 0 ? [el("li", { className: "muted", textContent: "None" })] : rows));
  };
  const refresh = () => void render().catch((error: unknown) => report(`Cannot read the site access: ${error instanceof Error ? error.message : String(error)}`));

  chrome.permissions.onAdded.addListener(refresh);
  chrome.permissions.onRemoved.addListener(refresh);
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && SITE_REQUESTS_KEY in changes) refresh();
  });
  if (options.currentTab) {
    chrome.tabs.onActivated.addListener(refresh);
    chrome.tabs.onUpdated.addListener((_id, change) => {
      if (change.url !== undefined) refresh();
    });
  }
  refresh();
}
