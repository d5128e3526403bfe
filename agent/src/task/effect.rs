//! What the task hands the coordinator to carry out: every effect, and the model calls among
//! them.

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
    /// An action ended: whoever waits for it can stop waiting.
    ActionFinished(ActionRecord),
    /// The task is deleted: everything kept of task `task_id` goes (its artifacts, every stored
    /// row, its alarm, its entry in the session list), and its viewers' sockets close; then
    /// [`Input::Erased`].
    Erase {
        task_id: String,
    },
}
