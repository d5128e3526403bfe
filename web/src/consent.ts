// The OAuth consent page (`#/authorize?…`): an MCP client that speaks only OAuth asks to drive
// this browser through `/mcp`. The server sends the person here with the client's request;
// signed in, they allow or refuse it, and their browser goes back to the client with a code
// (or the refusal). The request is checked by the server on the way in and again on the answer.
import type { ConsentRequest } from "../../protocol/ts/protocol.ts";
import { answerConsent, consentRequest } from "./api.ts";
import { h } from "./dom.ts";

/** The authorization request's query when `hash` is the consent page's, else `null`. */
export function consentQuery(hash: string): string | null {
  const match = /^#\/authorize\?(.*)$/.exec(hash);
  return match ? match[1]! : null;
}

/** Puts the consent page for the request `query` into `root`, asked with `token`. */
export async function showConsent(root: HTMLElement, token: string, query: string): Promise<void> {
  const error = h("div", { class: "form-error", role: "alert", "data-testid": "oauth-error", hidden: true });
  const card = h("div", { class: "token-card", "data-testid": "oauth-consent" }, h("div", { class: "brand brand-lg" }, h("span", { class: "logo" }, "M"), "Mimo"));
  root.replaceChildren(h("div", { class: "token-screen" }, card));
  const fail = (err: unknown) => {
    error.textContent = err instanceof Error ? err.message : String(err);
    error.hidden = false;
  };
  let request: ConsentRequest;
  try {
    request = await consentRequest(token, query);
  } catch (err) {
    card.append(h("h1", {}, "This client cannot be authorized"), error);
    fail(err);
    return;
  }
  const allow = h("button", { class: "btn btn-primary btn-block", type: "button", "data-testid": "oauth-allow" }, "Allow");
  const deny = h("button", { class: "btn btn-ghost btn-block", type: "button", "data-testid": "oauth-deny" }, "Don't allow");
  const answer = async (allowed: boolean) => {
    allow.disabled = deny.disabled = true;
    try {
      location.href = (await answerConsent(token, query, allowed)).redirectTo;
    } catch (err) {
      allow.disabled = deny.disabled = false;
      fail(err);
    }
  };
  allow.addEventListener("click", () => void answer(true));
  deny.addEventListener("click", () => void answer(false));
  card.append(
    h("h1", { "data-testid": "oauth-client" }, `Allow ${request.clientName} to use your browser?`),
    h(
      "p",
      { class: "muted" },
      `${request.clientName} will drive this browser through Mimo's MCP endpoint: open pages, read them and act in them — with the same confirmations, site rules, secrets and audit as Mimo's own agent. Revoke it any time under Settings → MCP clients.`,
    ),
    h("p", { class: "muted small", "data-testid": "oauth-redirect" }, "It returns to ", h("code", {}, request.redirectUri)),
    allow,
    deny,
    error,
  );
}
