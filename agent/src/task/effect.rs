//! What the task hands the coordinator to carry out: every effect, and the model calls among
//! them. The conversation, the run and the action queue speak the same effects: the task
//! routes them (an action to submit goes to the queue, a model call may wait for the alarm)
//! and the rest reaches the coordinator unchanged.

use super::*;

/// I/O for the coordinator, in order. Each carries what it needs, as it was when it was made.
#[derive(Debug, Clone, PartialEq)]
// Effects are short-lived (returned, carried out, dropped); their size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Effect {
    /// Append to the task's event log (it gets the next sequence number) and send to every web
    /// socket of the task.
    Emit(FrontendEvent),
    /// A submitted step that will not run, though it was not refused when it was submitted:
    /// the person declined it, or did not answer in time ([`client_steps::Held`]). Its caller
    /// is told `error`.
    StepRefused {
        action_id: String,
        error: ErrorObject,
    },
    /// Send to every web socket of the task without keeping it in the log (it is state, sent
    /// again on connect: the browser snapshot).
    Show(FrontendEvent),
    SaveTask(TaskRecord),
    SaveMessage(StoredMessage),
    SaveSummary(ChatSummary),
    SaveRun(Option<AgentRun>),
    SaveAction(ActionRecord),
    SaveSnapshot(SnapshotPush),
    /// Store an artifact's record (a new grant, or its completed upload).
    SaveArtifact(ArtifactRecord),
    /// Delete these artifacts, whose retention ended: their R2 objects first, then their
    /// records (a crash in between leaves a record whose object is gone, deleted again by the
    /// next sweep; never an object no record lists).
    DeleteArtifacts(Vec<ArtifactRecord>),
    /// Make sure the alarm rings by `at` (an earlier alarm serves as well).
    WakeAt(u64),
    CallLlm(LlmCall),
    /// Ask the model something beside the conversation (`purpose`), offering no tools and
    /// streaming nothing to the web app, and report the text of its answer as
    /// [`Input::ModelAnswered`].
    AskModel {
        purpose: SideCall,
        messages: Vec<llm::ChatMessage>,
    },
    /// Ask the skill library for the skills of a goal and a page, and report its answer as
    /// [`Input::SkillsFound`] (a model call waits for it).
    LookupSkills {
        turn_id: String,
        query: SkillQuery,
    },
    /// Ask the registry for an extension (automatic selection when `client_id` is `None`) and
    /// report its answer as [`Input::Bound`].
    Bind {
        client_id: Option<String>,
        purpose: BindPurpose,
    },
    /// Send an action to its extension; on failure report [`Input::DispatchFailed`].
    Dispatch(BrowserAction),
    /// Send a frame to an extension, best effort: an offline extension learns the same later.
    Tell {
        client_id: String,
        message: ServerToExtension,
    },
    /// Queue a browser action on the task's extension (the run's step, or its page's
    /// observation); its end is reported to the conversation. Taken by the task's action
    /// queue: it never reaches the coordinator.
    Submit {
        action_id: String,
        command: ActionCommand,
    },
    /// An action ended: whoever waits for it can stop waiting.
    ActionFinished(ActionRecord),
    /// The task is deleted: everything kept of task `task_id` goes (its artifacts, every stored
    /// row, its alarm, its entry in the session list), and its viewers' sockets close; then
    /// [`Input::Erased`].
    Erase {
        task_id: String,
    },
}

/// A model call: stream a completion offering `tools`, after `delay_ms` (a retry's backoff),
/// feeding each event back to [`Conversation::llm_event`](crate::conversation::Conversation::llm_event) with `turn_id` (the task's
/// `Input::Llm`) while the turn is current. With `image`, the page's screenshot is read first
/// and attached ([`LlmCall::attach`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LlmCall {
    pub turn_id: String,
    pub messages: Vec<llm::ChatMessage>,
    pub tools: Vec<llm::ToolSpec>,
    pub delay_ms: u64,
    pub image: Option<PageImage>,
}

impl LlmCall {
    /// The screenshot read for [`LlmCall::image`] joins the page's message.
    pub fn attach(&mut self, image: llm::Image) {
        let page = self.image.as_ref().map(|i| i.message);
        if let Some(message) = page.and_then(|at| self.messages.get_mut(at)) {
            message.image = Some(image);
        }
    }

    /// What the web app is told when the screenshot could not be read or sent (`why`): the
    /// call goes without it.
    pub fn image_unavailable(why: &str) -> FrontendEvent {
        FrontendEvent::Warning {
            message: format!(
                "The page's screenshot could not be sent to the model ({why}); it reads the page \
                 as text this step."
            ),
        }
    }
}

/// What a model call beside the conversation ([`Effect::AskModel`]) is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideCall {
    /// Naming the task after its first exchange (a failure leaves the title as it is).
    Title,
    /// Summarizing the conversation's earlier part, which grew too long for the context.
    Summary(Compaction),
}

/// The latest page's screenshot, to be sent with a model call: the shell reads artifact
/// `artifact_id` and attaches it to the call's message `message` (the page's). Reading it is
/// I/O, so the call only names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageImage {
    pub artifact_id: String,
    pub message: usize,
}

/// A summary asked of the model: of the conversation up to and including position `up_to`,
/// standing for `messages` messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compaction {
    pub up_to: u32,
    pub messages: u32,
}
