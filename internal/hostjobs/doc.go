// Package hostjobs is what hosts are told of jobs and tasks, the state a
// server's host sessions share of their tasks, and how a host's call
// becomes a job while it runs. Every task is a job (package jobs keeps,
// runs and recovers them); this package says how a job reads to a host,
// holds a task's questions for it, and links a running call to the job
// it becomes:
//
//   - The timing rule (timer.go): how long a host with a given profile
//     waits for a call whatever happens (Timer), how long before that
//     timer a call becomes a job (Margin), and how long mcpx may keep the
//     host waiting on one (AnswerWindow).
//   - A job as a tool result (answer.go): the words a model follows and
//     the job's structuredContent (Running, State, Result), and the job
//     meta-tools' definitions (JobTool, JobCancelTool).
//   - A job as a task (tasks.go, late.go): the 2025-11-25 Task a job reads
//     as (Tasks.Of), the ttl a task is granted and keeps (MaxTTLGranted,
//     WithGrantedTTL, GrantedTTL), the error an ended task without a
//     result answers with (Failure), and a late end told beside it.
//   - Tasks on the wire (taskwire.go): the capabilities a host is
//     declared (TasksCapability, TasksExtension), whether a 2026-07-28
//     request takes tasks (TakesTasks) and the -32021 when it must
//     (NeedsTasks), a 2026-07-28 DetailedTask (Detailed), tasks/list's
//     cursor, and the error an upstream's question of a job gets when
//     the job cannot put it to its host (JobError).
//   - A task's questions (inputs.go): Tasks.AskInput keeps a task's call's
//     questions until its host answers them (Answer, for a 2026-07-28
//     host's tasks/update; AskQuestions, for a 2025-11-25 host's
//     tasks/result, which puts them on its own stream through an Asker);
//     Pending lists them for tasks/get; Asked fires as one is asked.
//   - A call that becomes a job while it runs, on its host request's own
//     goroutine (link.go): a Link, made for a call that may, becomes one
//     at its host's deadline (DeadlineReached) or as a legacy HTTP host leaves
//     (HostLeft), and stands in front of the host's Asker: while the call
//     is its request's, a question goes on the request's stream (a
//     LiveAsker) and waits on as the job's if the call becomes one
//     (askwait.go); a job's questions and log messages go to the host
//     that started it on its session's stream, or are refused naming the
//     job (ask.go), and the job's progress says while they wait.
//   - The job meta-tools (jobmeta.go): mcpx_job and mcpx_job_cancel, given
//     their request as a Request and who asks as an Asking.
//   - The tasks methods (tasks2025.go, tasksext.go): tasks/get,
//     tasks/result, tasks/list and tasks/cancel of 2025-11-25, and the
//     extension's tasks/get, tasks/update and tasks/cancel, as methods of
//     Tasks that the sessions register, each given its request as a
//     Request (request.go) and who asks as an Asking.
//   - Which of its principal's jobs a host may read, wait on, list and
//     cancel (asking.go): an Asking, made by the session at the face
//     (whose jobs, who asks, under which policy), decides it with the
//     policy (principal.Policy.Decide, ReadJob and CancelJob) and reads
//     the jobs from the manager.
//
// The contract: hostjobs never sees a transport, and sees a host's
// request and session only through a Link's Host (host.go) and a
// handler's Request (request.go), which the session implements: what
// they read of the request and its session (its params, what a job keeps
// of the call, its streams), and what only the session may do (answer the
// request on its stream, release it through its own method). Everything
// else is done here, downward: a Link makes its job itself
// (jobs.Manager.Start with jobs.Adopted, Link.Jobs), and a handler
// decides with its Asking what the host may do to a job. The sessions
// (package hostserver) import it, never the other way: they decide who
// asks, and call in here for the words, the views, the links, the
// meta-tools, the tasks methods and the questions' store, which is safe
// for concurrent use. A Tasks is shared by every session of one server,
// which sets its fields before the first use; a task's questions live in
// the gateway running its call, and are dropped when the call ends.
package hostjobs
