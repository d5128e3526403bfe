// Points a vision model reads off the screenshot land where it saw them, whatever the screen:
// the screenshot is the viewport at the device pixel ratio, capped at 1280 pixels wide, so its
// pixels are not CSS pixels. The model is told the screenshot's size; the point goes out with
// the scale it was read at, and the extension maps it to the page. A scripted "vision" model
// clicks the centre of a button drawn on a canvas, in the screenshot's pixels.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { newTask, WebClient } from "../support/clients.ts";
import type { ScriptTurn } from "../llm-server/server.ts";
import { agentStep } from "../support/shopper.ts";
import { logged, pageAt, startHarness } from "./harness.ts";
import type { Screen } from "./harness.ts";

/** Where board.html draws "Play": the canvas at (20, 20) with a 1 px border, the button at (100, 50) in it, 100×50. */
const PLAY_CENTRE = { x: 21 + 150, y: 21 + 75 };

/** A vision model clicking "Play" where it sees it: the screenshot is `screen.width` CSS pixels wide, drawn at `width` pixels. */
function clickPlay(board: string, screen: Screen): ScriptTurn[] {
  return [
    agentStep({ navigate: { url: board } }),
    {
      respond: ({ userText }) => {
        const size = /^screenshot: (\d+)x(\d+) pixels/m.exec(userText);
        assert.ok(size !== null, "the model is told the screenshot's size");
        const perCss = Number(size[1]) / screen.width;
        return agentStep({ click_at: { x: Math.round(PLAY_CENTRE.x * perCss), y: Math.round(PLAY_CENTRE.y * perCss) } });
      },
    },
    agentStep({ done: { success: true, text: "Pressed Play." } }),
  ];
}

const SCREENS: Screen[] = [
  // A wide window on a high-density screen: 3840 device pixels, capped to 1280 (⅓ of them).
  { width: 1920, height: 1080, deviceScaleFactor: 2 },
  // A narrow one: 1600 device pixels, capped to 1280 (0.8 of them, 1.6 per CSS pixel).
  { width: 800, height: 600, deviceScaleFactor: 2 },
  // A small one on a high-density screen, under the cap: 2 pixels per CSS pixel.
  { width: 600, height: 700, deviceScaleFactor: 2 },
];

describe("screenshot coordinates", () => {
  for (const screen of SCREENS) {
    it(`a click read off the screenshot hits its target at ${screen.width}×${screen.height} CSS pixels, ratio ${screen.deviceScaleFactor}`, { timeout: 90_000 }, async () => {
      const h = await startHarness({}, { screen });
      try {
        const board = `${h.a}/board.html`;
        h.mimo.llm.script(clickPlay(board, screen));
        const taskId = await newTask(h.mimo);
        const web = await WebClient.connect(h.mimo, taskId);
        web.send({ type: "user_message", content: `Press Play on ${board}` });
        const outcome = await web.waitFor((e) => e.type === "structuredOutput", "the task's outcome", 60_000);
        assert.equal((outcome as { status?: string }).status, "ok", JSON.stringify(outcome));
        const expected = Math.min(1280, screen.width * screen.deviceScaleFactor);
        const request = JSON.stringify(h.mimo.llm.requests().at(-2)!.body);
        assert.match(request, new RegExp(`screenshot: ${expected}x\\d+ pixels`), /screenshot: [^(]*/.exec(request)?.[0]);
        await logged(await pageAt(h, board), "canvas:play:trusted=true");
        await web.close();
      } finally {
        await h.close();
      }
    });
  }
});
