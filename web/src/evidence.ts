// Evidence of a step, shown where the person confirms it and in its replay: the page's
// screenshot with the step's target outlined, and the step's risk.

import type { BoundingBox, RiskLevel } from "../../protocol/ts/protocol.ts";
import { h } from "./dom.ts";

export function riskBadge(risk: RiskLevel, testId: string): HTMLElement {
  return h("span", { class: `risk risk-${risk}`, "data-testid": testId }, `${risk} risk`);
}

export type ShotOptions = {
  /** Its download URL (the artifact's, fetched when needed). */
  url: Promise<string>;
  alt: string;
  /** Where the step's target is, in the screenshot's pixels. */
  target?: BoundingBox;
  /** Test ids of the image and of the outline. */
  testIds: { shot: string; target: string };
  /** The screenshot cannot be had (expired, deleted): what becomes of its frame. */
  onMissing: (frame: HTMLElement) => void;
};

/** A page's screenshot with the target outlined once the image has loaded (its size known). */
export function outlinedShot(opts: ShotOptions): HTMLElement {
  const shot = h("img", { class: "evidence-shot", alt: opts.alt, "data-testid": opts.testIds.shot });
  const frame = h("div", { class: "evidence" }, shot);
  const target = opts.target;
  shot.addEventListener("load", () => {
    if (target === undefined || shot.naturalWidth === 0) return;
    // The box is in the page's CSS pixels, as the screenshot is.
    const pct = (v: number, of: number) => `${(100 * v) / of}%`;
    const box = h("div", { class: "evidence-target", "data-testid": opts.testIds.target });
    box.style.left = pct(target.x, shot.naturalWidth);
    box.style.top = pct(target.y, shot.naturalHeight);
    box.style.width = pct(target.w, shot.naturalWidth);
    box.style.height = pct(target.h, shot.naturalHeight);
    frame.append(box);
  });
  shot.addEventListener("error", () => opts.onMissing(frame));
  opts.url.then(
    (url) => (shot.src = url),
    () => opts.onMissing(frame),
  );
  return frame;
}
