// Which form fields hold secrets. Their values are never sent anywhere: the DOM index, the HTML
// snapshot and the readability text show `SECRET_PLACEHOLDER` instead. Works on anything with
// `tagName` and `getAttribute`, so it is tested without a DOM.

export const SECRET_PLACEHOLDER = "••••";

export type FieldLike = { tagName: string; getAttribute(name: string): string | null };

/** `autocomplete` tokens that name secrets: passwords, one-time codes, payment cards. */
const SECRET_AUTOCOMPLETE = /(^|\s)(current-password|new-password|one-time-code|cc-[a-z-]+)(\s|$)/i;

/** The `name` or `id` of a payment card's number or code field whose `autocomplete` says nothing. */
const CARD_FIELD = /(^|[^a-z])(card[^a-z0-9]{0,2}(num(ber)?|no|code)|cc[^a-z0-9]{0,2}(num(ber)?|no|cvv|cvc|csc)|cvv2?|cvc2?|csc|security[^a-z0-9]{0,2}code)([^a-z]|$)/i;

export function isSensitiveField(el: FieldLike): boolean {
  // A field a secret was typed into (`{{secret:name}}`), whatever its kind.
  if (el.getAttribute("data-mimo-secret") !== null) return true;
  const sensitive = el.getAttribute("data-sensitive");
  if (sensitive !== null && sensitive.toLowerCase() !== "false") return true;
  const tag = el.tagName.toLowerCase();
  if (tag !== "input" && tag !== "textarea") return false;
  if (tag === "input" && (el.getAttribute("type") ?? "").toLowerCase() === "password") return true;
  const autocomplete = el.getAttribute("autocomplete") ?? "";
  if (SECRET_AUTOCOMPLETE.test(autocomplete) || /password/i.test(autocomplete)) return true;
  return [el.getAttribute("name"), el.getAttribute("id")].some((n) => n !== null && CARD_FIELD.test(n));
}

/** A field's value as it may be shown: empty stays empty, a secret becomes the placeholder. */
export function shownValue(el: FieldLike, value: string): string {
  return value !== "" && isSensitiveField(el) ? SECRET_PLACEHOLDER : value;
}
