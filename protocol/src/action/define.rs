//! The macro that turns the action catalog ([`super::catalog`]) into code. Each entry of the
//! catalog is one action; from the entries it writes:
//!
//! - [`AgentAction`](super::AgentAction), the model's actions (its variants, their arguments
//!   and their doc comments, which are the model's description of each), in the entries' order;
//! - [`ActionCommand`](super::ActionCommand), the commands the extension runs;
//! - `ActionKind::traits` (the scheduler's and the extension's rules of each command);
//! - `AgentActionKind::wording` (how a step reads for people) and
//!   `AgentActionKind::command_kind` (the command it becomes);
//! - `AgentAction::command` (the command a model action becomes) and `AgentAction::target`
//!   (the element of the page it acts on).
//!
//! An entry is one of four shapes:
//!
//! ```text
//! /// doc                                   the server's own command
//! command Name { fields }
//! traits { rerun: …, mutating: …, … }
//!
//! /// doc (the model reads it)              a model action with a command of its own
//! model Name { fields }
//! wording "…";
//! target <expr over the fields, by reference>;   (optional: the element it acts on)
//! /// doc
//! command Name { fields }
//! traits { … }
//! into |cx| <the command, from the fields and cx: CommandContext>;
//!
//! model Name { fields } wording "…"; target …;   a model action that becomes another entry's
//! becomes Command;                                 command
//! into |cx| <expr>;
//!
//! model Name { fields } wording "…"; target …;   a model action the run answers itself
//! answered;
//! ```
//!
//! The entries are read one at a time (a "tt muncher"): each adds its part to the seven pieces
//! carried in brackets, which are written out once the list is empty. The match arms a piece
//! holds bind the fields by the entry's own names, and `into`'s context by the entry's own
//! `|cx|` (a tuple's second element), so the expressions written in the catalog see them.

/// `$e`, or `None` when no expression is given (an action without a target).
macro_rules! given_or_none {
    () => {
        None
    };
    ($e:expr) => {
        $e
    };
}

macro_rules! action_catalog {
    // The server's own command: no model action names it.
    (@entries [ {$($m:tt)*} {$($c:tt)*} {$($t:tt)*} {$($w:tt)*} {$($i:tt)*} {$($b:tt)*} {$($g:tt)*} ]
        $(#[$command_meta:meta])*
        command $command:ident { $($command_fields:tt)* }
        traits { $($traits:tt)* }
        $($rest:tt)*
    ) => {
        action_catalog!(@entries [
            { $($m)* }
            { $($c)* $(#[$command_meta])* $command { $($command_fields)* }, }
            { $($t)* ActionKind::$command => ActionTraits { $($traits)* }, }
            { $($w)* } { $($i)* } { $($b)* } { $($g)* }
        ] $($rest)*);
    };
    // A model action with a command of its own.
    (@entries [ {$($m:tt)*} {$($c:tt)*} {$($t:tt)*} {$($w:tt)*} {$($i:tt)*} {$($b:tt)*} {$($g:tt)*} ]
        $(#[$model_meta:meta])*
        model $model:ident { $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty ),* $(,)? }
        wording $wording:literal;
        $( target $target:expr; )?
        $(#[$command_meta:meta])*
        command $command:ident { $($command_fields:tt)* }
        traits { $($traits:tt)* }
        into |$cx:ident| $into:expr;
        $($rest:tt)*
    ) => {
        action_catalog!(@entries [
            { $($m)* $(#[$model_meta])* $model { $( $(#[$field_meta])* $field : $field_ty ),* }, }
            { $($c)* $(#[$command_meta])* $command { $($command_fields)* }, }
            { $($t)* ActionKind::$command => ActionTraits { $($traits)* }, }
            { $($w)* AgentActionKind::$model => $wording, }
            { $($i)* (AgentAction::$model { $($field),* }, $cx) => Ok(Some($into)), }
            { $($b)* AgentActionKind::$model => Some(ActionKind::$command), }
            { $($g)* AgentAction::$model { $($field),* } => given_or_none!($($target)?), }
        ] $($rest)*);
    };
    // A model action that becomes another entry's command.
    (@entries [ {$($m:tt)*} {$($c:tt)*} {$($t:tt)*} {$($w:tt)*} {$($i:tt)*} {$($b:tt)*} {$($g:tt)*} ]
        $(#[$model_meta:meta])*
        model $model:ident { $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty ),* $(,)? }
        wording $wording:literal;
        $( target $target:expr; )?
        becomes $command:ident;
        into |$cx:ident| $into:expr;
        $($rest:tt)*
    ) => {
        action_catalog!(@entries [
            { $($m)* $(#[$model_meta])* $model { $( $(#[$field_meta])* $field : $field_ty ),* }, }
            { $($c)* } { $($t)* }
            { $($w)* AgentActionKind::$model => $wording, }
            { $($i)* (AgentAction::$model { $($field),* }, $cx) => Ok(Some($into)), }
            { $($b)* AgentActionKind::$model => Some(ActionKind::$command), }
            { $($g)* AgentAction::$model { $($field),* } => given_or_none!($($target)?), }
        ] $($rest)*);
    };
    // A model action the run answers itself, from what it holds.
    (@entries [ {$($m:tt)*} {$($c:tt)*} {$($t:tt)*} {$($w:tt)*} {$($i:tt)*} {$($b:tt)*} {$($g:tt)*} ]
        $(#[$model_meta:meta])*
        model $model:ident { $( $(#[$field_meta:meta])* $field:ident : $field_ty:ty ),* $(,)? }
        wording $wording:literal;
        $( target $target:expr; )?
        answered;
        $($rest:tt)*
    ) => {
        action_catalog!(@entries [
            { $($m)* $(#[$model_meta])* $model { $( $(#[$field_meta])* $field : $field_ty ),* }, }
            { $($c)* } { $($t)* }
            { $($w)* AgentActionKind::$model => $wording, }
            { $($i)* (AgentAction::$model { .. }, _) => Ok(None), }
            { $($b)* AgentActionKind::$model => None, }
            { $($g)* AgentAction::$model { $($field),* } => given_or_none!($($target)?), }
        ] $($rest)*);
    };
    // Every entry read: the items.
    (@entries [ {$($m:tt)*} {$($c:tt)*} {$($t:tt)*} {$($w:tt)*} {$($i:tt)*} {$($b:tt)*} {$($g:tt)*} ]) => {
        /// The actions the model can take. Elements are named by their `index` in the page's
        /// element list (`[12]<button>…`), which is the extension's `clickId`.
        #[derive(
            Debug,
            Clone,
            PartialEq,
            Serialize,
            Deserialize,
            TS,
            strum::IntoStaticStr,
            strum::EnumDiscriminants,
        )]
        #[cfg_attr(not(target_arch = "wasm32"), derive(schemars::JsonSchema))]
        #[serde(remote = "Self", rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        #[strum_discriminants(
            name(AgentActionKind),
            derive(strum::EnumIter, strum::IntoStaticStr, strum::EnumString),
            strum(serialize_all = "snake_case")
        )]
        pub enum AgentAction {
            $($m)*
        }
        via_json_value!(AgentAction);

        /// The action catalog: the action's name and its parameters. [`ActionKind`] names each
        /// action without its parameters and says what kind of action it is.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS, strum::EnumDiscriminants)]
        #[serde(remote = "Self", rename_all = "snake_case")]
        #[ts(tag = "name", content = "params")]
        #[strum_discriminants(
            name(ActionKind),
            derive(Hash, strum::EnumIter, strum::IntoStaticStr),
            strum(serialize_all = "snake_case")
        )]
        pub enum ActionCommand {
            $($c)*
        }
        via_json_value_adjacent!(ActionCommand, "name", "params");

        impl ActionKind {
            /// The catalog: every action's traits, written out in full so that a new action has
            /// to decide each of them.
            pub const fn traits(self) -> ActionTraits {
                use Rerun::*;
                use Verify::*;
                match self {
                    $($t)*
                }
            }
        }

        impl AgentActionKind {
            /// How a step of this action reads for people (the web app's step titles), as a
            /// template of the action's arguments (see the catalog's module documentation).
            pub const fn wording(self) -> &'static str {
                match self {
                    $($w)*
                }
            }

            /// The command an action of this kind becomes (`None`: the run answers it itself).
            pub const fn command_kind(self) -> Option<ActionKind> {
                match self {
                    $($b)*
                }
            }
        }

        impl AgentAction {
            /// The command this action becomes (`None` for the ones the run answers itself):
            /// `attachments` are the task's attached files (a file to upload that is not one of
            /// them is the step's error), `agent_id` the agent a bridge invocation is
            /// attributed to.
            #[allow(unused_variables)]
            pub fn command(
                &self,
                attachments: &[Attachment],
                agent_id: &str,
            ) -> Result<Option<ActionCommand>, ErrorObject> {
                let context = CommandContext {
                    attachments,
                    agent_id,
                };
                match (self.clone(), &context) {
                    $($i)*
                }
            }

            /// The element of the page's list it acts on, by index, if any.
            #[allow(unused_variables)]
            pub fn target(&self) -> Option<u32> {
                match self {
                    $($g)*
                }
            }
        }
    };
    (@entries $pieces:tt $($malformed:tt)*) => {
        compile_error!(
            "an entry of the action catalog has none of its four shapes (see action/define.rs)"
        );
    };
    // The catalog as written: read its entries.
    ($($entries:tt)*) => {
        action_catalog!(@entries [ {} {} {} {} {} {} {} ] $($entries)*);
    };
}
