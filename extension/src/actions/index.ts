// The action catalog's handlers, one per action: what each action's name runs. An action of the
// protocol without a handler here (or a handler of the wrong shape for its traits) does not
// compile. What kind of action each one is — page-changing, safe to rerun, its overlay label —
// is not here but in `ACTION_TRAITS`, generated from the catalog in protocol/src/action/catalog.rs.
import { bridgeInvoke } from "./bridge-invoke.ts";
import { browserClick } from "./click.ts";
import { browserClickAt } from "./click-at.ts";
import { browserCloseTab } from "./close-tab.ts";
import { browserDebuggerAttach } from "./debugger-attach.ts";
import { browserDialog } from "./dialog.ts";
import { browserDrag } from "./drag.ts";
import { browserDomIndex } from "./dom-index.ts";
import { browserGetHtml } from "./get-html.ts";
import { browserBack, browserForward } from "./history.ts";
import type { ActionHandlers } from "./handler.ts";
import { browserHover } from "./hover.ts";
import { browserHoverAt } from "./hover-at.ts";
import { browserNavigate } from "./navigate.ts";
import { browserObserve } from "./observe.ts";
import { browserOpenTab } from "./open-tab.ts";
import { browserPressKey } from "./press-key.ts";
import { browserReadTab } from "./read-tab.ts";
import { browserReadabilityExtract } from "./readability-extract.ts";
import { browserReload } from "./reload.ts";
import { browserScreenshot } from "./screenshot.ts";
import { browserScroll } from "./scroll.ts";
import { browserScrollTo } from "./scroll-to.ts";
import { browserSelectOption } from "./select-option.ts";
import { browserSwitchTab } from "./switch-tab.ts";
import { taskStart } from "./task-start.ts";
import { taskStop } from "./task-stop.ts";
import { browserType } from "./type.ts";
import { browserUploadFile } from "./upload-file.ts";
import { browserWaitForLoaded } from "./wait-for-loaded.ts";
import { browserWaitFor } from "./wait-for.ts";
import { browserXpathScan } from "./xpath-scan.ts";

export const ACTION_HANDLERS: ActionHandlers = {
  task_start: taskStart,
  task_stop: taskStop,
  browser_debugger_attach: browserDebuggerAttach,
  browser_wait_for_loaded: browserWaitForLoaded,
  browser_screenshot: browserScreenshot,
  browser_readability_extract: browserReadabilityExtract,
  browser_dom_index: browserDomIndex,
  browser_observe: browserObserve,
  browser_xpath_scan: browserXpathScan,
  browser_click: browserClick,
  browser_type: browserType,
  browser_get_html: browserGetHtml,
  browser_scroll: browserScroll,
  browser_navigate: browserNavigate,
  browser_back: browserBack,
  browser_forward: browserForward,
  browser_reload: browserReload,
  browser_select_option: browserSelectOption,
  browser_press_key: browserPressKey,
  browser_hover: browserHover,
  browser_wait_for: browserWaitFor,
  browser_dialog: browserDialog,
  browser_switch_tab: browserSwitchTab,
  browser_open_tab: browserOpenTab,
  browser_close_tab: browserCloseTab,
  browser_scroll_to: browserScrollTo,
  browser_click_at: browserClickAt,
  browser_hover_at: browserHoverAt,
  browser_drag: browserDrag,
  browser_upload_file: browserUploadFile,
  browser_read_tab: browserReadTab,
  bridge_invoke: bridgeInvoke,
};
