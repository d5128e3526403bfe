// browser_dom_index: every interactive element of the page across frames (same- and
// cross-origin, not those of sites the person has not allowed) and what accepts a drop
// (drop-zones.ts), numbered with click ids, and
// the compact text form for the model. An index too large for one message is stored whole in
// R2 (gzip-compressed JSON) and the message carries what fits.
import { DOM_INDEX_MAX_BYTES } from "../../../protocol/ts/protocol.ts";
import type { DomElement, DomIndexResult, ScanScope } from "../../../protocol/ts/protocol.ts";
import { startUpload } from "../artifacts.ts";
import { markDropZones } from "../drop-zones.ts";
import { DEFAULT_CLICK_ATTR } from "../frame-protocol.ts";
import type { FrameIndex, IndexLine, Point } from "../frame-protocol.ts";
import { allFrames, frameCall } from "../frames.ts";
import type { FrameInfo } from "../frames.ts";
import { siteOf, siteRulesRefusal } from "../guard.ts";
import { utf8 } from "../image.ts";
import { fitIndex, indent, pageLine } from "../index-text.ts";
import { ActionError, errorText, MAX_RESULT_BYTES } from "../results.ts";
import type { ActionSuccess } from "../results.ts";
import { siteAllowed } from "../site-access.ts";
import { tabList } from "../task-tabs.ts";
import { tabsOf } from "../tasks.ts";
import { timeline } from "../timeline.ts";
import type { Handler, TabContext } from "./handler.ts";

export const browserDomIndex: Handler<"browser_dom_index"> = {
  run: (ctx, params) =>
    indexPage(ctx, { scope: params.scope ?? "viewport", attr: params.assignAttr ?? DEFAULT_CLICK_ATTR, xpathScan: false, ...(params.within !== undefined ? { within: params.within } : {}) }),
};

/**
 * What to index: `scope`, writing click ids to `attr`; `xpathScan` (browser_xpath_scan) keeps
 * the xpaths when the result must be cut to fit one message (`budget`: what of it the index
 * may take); `within`: only the top frame's element of that click id (of the last index) and
 * what it holds.
 */
export type IndexRequest = { scope: ScanScope; attr: string; xpathScan: boolean; budget?: number; within?: number };

/** Indexes the page as `request` asks. */
export async function indexPage(ctx: TabContext, request: IndexRequest): Promise<ActionSuccess> {
  const { scope, attr, xpathScan, budget = MAX_RESULT_BYTES, within } = request;
  if (!/^[a-zA-Z_][\w.:-]*$/.test(attr)) throw new ActionError("SCHEMA_VALIDATION_FAILED", `${JSON.stringify(attr)} is not an attribute name`);
  const warnings: string[] = [];
  const stages = timeline(ctx.action);
  // The top frame says first whether anything in it can be dragged; only then are its drop
  // zones searched for (drop-zones.ts), and it is asked again.
  let asked = performance.now();
  const region = within !== undefined ? { within } : {};
  let top = await frameCall<FrameIndex | { dropSearch: true }>(ctx.tabId, 0, { op: "index", scope, attr, startId: 1, xpath: true, askDropSearch: true, ...region });
  if ("dropSearch" in top) {
    await stages.part("index.drop", () => markDropZones(ctx.deps.cdp, ctx.tabId).catch((error: unknown) => warnings.push(`what accepts a drop was not looked for: ${errorText(error)}`)));
    asked = performance.now();
    top = await frameCall<FrameIndex>(ctx.tabId, 0, { op: "index", scope, attr, startId: 1, xpath: true, ...region });
  }
  stages.note("index.top", performance.now() - asked);
  // Where the top frame's time went (its walk of the DOM, the boxes, the checks, the lines).
  for (const [phase, ms] of Object.entries(top.phases)) if (phase !== "items") stages.note(`index.top.${phase}`, ms);
  const elements: DomElement[] = top.elements.map((e) => ({ ...e, frameId: 0 }));
  const clicks: Array<[number, number, number]> = top.nextId > 1 ? [[1, top.nextId - 1, 0]] : [];
  let next = top.nextId;
  // Frames of sites the person has not allowed are left out (one may still hold a content
  // script from before a revoke): the index never reads them. So are frames of sites the task's
  // rules keep it from (loaded before the rules held the tab, or the error page of a request
  // they cancelled): nothing in them gets a click id.
  const frames: FrameInfo[] = [];
  for (const f of await allFrames(ctx.tabId)) {
    const refusal = siteRulesRefusal(ctx.task, f.url);
    if (refusal !== null) warnings.push(`frame ${f.frameId} was not indexed: ${refusal}`);
    else if (await siteAllowed(f.url)) frames.push(f);
    else warnings.push(`frame ${f.frameId} was not indexed: Mimo is not allowed on ${siteOf(f.url)}`);
  }

  // Child frames, depth first, each answering with its own viewport's coordinates.
  const expand = async (index: FrameIndex, frameId: number, offset: Point, clip: { x: number; y: number; w: number; h: number }, depth: number): Promise<string[]> => {
    const out: string[] = [];
    const children = index.frames.length > 0 ? await childTokens(ctx.tabId, frameId, frames) : new Map<string, number>();
    for (const line of index.lines as IndexLine[]) {
      if ("text" in line) {
        out.push(indent(depth + line.depth, line.text));
        continue;
      }
      const child = index.frames.find((f) => f.token === line.frame);
      const childId = children.get(line.frame);
      if (child === undefined || childId === undefined) continue;
      const info = frames.find((f) => f.frameId === childId);
      out.push(indent(depth + line.depth, `<iframe frame=${childId}${info ? ` src=${JSON.stringify(info.url.slice(0, 80))}` : ""}>`));
      const childClip = { x: clip.x - child.box.x, y: clip.y - child.box.y, w: clip.w, h: clip.h };
      let sub: FrameIndex;
      try {
        sub = await frameCall<FrameIndex>(ctx.tabId, childId, { op: "index", scope, attr, startId: next, clip: childClip, xpath: true });
      } catch (error) {
        warnings.push(`frame ${childId} was not indexed: ${errorText(error)}`);
        continue;
      }
      const origin = { x: offset.x + child.box.x, y: offset.y + child.box.y };
      for (const e of sub.elements) elements.push({ ...e, frameId: childId, bbox: { ...e.bbox, x: Math.round(e.bbox.x + origin.x), y: Math.round(e.bbox.y + origin.y) } });
      if (sub.nextId > next) clicks.push([next, sub.nextId - 1, childId]);
      next = sub.nextId;
      out.push(...(await expand(sub, childId, origin, childClip, depth + line.depth + 1)));
    }
    return out;
  };
  const lines = await stages.part("index.frames", () => expand(top, 0, { x: 0, y: 0 }, { x: 0, y: 0, w: top.viewport.w, h: top.viewport.h }, 0));
  const header = pageLine({ url: top.url, title: top.title, scrollX: top.scrollX, scrollY: top.scrollY, width: top.size.w, height: top.size.h, vw: top.viewport.w, vh: top.viewport.h });
  const task = await ctx.deps.tasks.update(ctx.task.taskId, (t) => {
    t.clicks = clicks;
    t.attr = attr;
    t.indexTabId = ctx.tabId;
  });
  const tabs = task !== undefined && tabsOf(task).length > 1 ? await tabList(task, ctx.tabId) : [];
  const full: DomIndexResult = { elements, text: [header, ...lines].join("\n"), url: top.url, title: top.title, scrollX: top.scrollX, scrollY: top.scrollY, tabs };
  const encoding = performance.now();
  const json = utf8(JSON.stringify(full));
  stages.note("index.encode", performance.now() - encoding);
  if (json.byteLength <= budget) return { result: full, warnings };
  // Too large for one message: the whole index goes to R2 and the message carries what fits,
  // so nothing is lost for whoever needs all of it. What fits is cut while the whole travels.
  let artifactId: string | undefined;
  let storing: Promise<unknown> = Promise.resolve();
  const unstored = (error: unknown) => `the whole index could not be stored (${errorText(error)}); only the part below was kept`;
  if (json.byteLength > DOM_INDEX_MAX_BYTES) {
    warnings.push(`the whole index is ${json.byteLength} bytes, over the artifact limit of ${DOM_INDEX_MAX_BYTES}; only the part below was kept`);
  } else {
    const storeStarted = performance.now();
    try {
      const started = await startUpload(await ctx.deps.server(), { taskId: ctx.task.taskId, kind: "dom_index", contentType: "application/json", actionId: ctx.action.actionId, gzip: true }, json);
      artifactId = started.artifactId;
      storing = started.stored.finally(() => stages.note("index.store", performance.now() - storeStarted));
    } catch (error) {
      warnings.push(unstored(error));
    }
  }
  // Cut to leave room for the fields that say where the whole is, added after.
  const where = { artifactId: artifactId ?? "", truncated: true };
  const whereBytes = utf8(JSON.stringify(where)).byteLength;
  const fitting = performance.now();
  const fitted = fitIndex(full, budget - whereBytes, xpathScan, json.byteLength);
  stages.note("index.fit", performance.now() - fitting);
  const kept = await storing.then(
    () => artifactId !== undefined,
    (error: unknown) => (warnings.push(unstored(error)), false),
  );
  if (fitted.warning !== undefined) warnings.push(kept ? `${fitted.warning}; the whole index is in artifact ${artifactId}` : fitted.warning);
  return { result: { ...fitted.result, ...(kept ? { artifactId } : {}), truncated: true }, warnings, partial: !kept };
}

/** The frame ids of a frame's children, by the tokens their iframes gave them. */
async function childTokens(tabId: number, parentFrameId: number, frames: FrameInfo[]): Promise<Map<string, number>> {
  const children = frames.filter((f) => f.parentFrameId === parentFrameId);
  const whoami = (f: FrameInfo) => frameCall<string | null>(tabId, f.frameId, { op: "whoami", waitMs: 150 }).catch(() => null);
  const tokens = await Promise.all(children.map(whoami));
  // A frame whose content script came after its parent's tokens (injected now, because its
  // site was allowed after the page loaded) missed them: the parent sends them again.
  if (tokens.includes(null) && (await frameCall(tabId, parentFrameId, { op: "tagFrames" }).then(() => true, () => false))) {
    await Promise.all(children.map(async (f, i) => (tokens[i] ??= await whoami(f))));
  }
  const map = new Map<string, number>();
  tokens.forEach((t, i) => {
    if (t !== null) map.set(t, children[i]!.frameId);
  });
  return map;
}
