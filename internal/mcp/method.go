package mcp

// Method names mcpx sends, answers or routes: every one the code names is
// here, and nowhere else (TestVocabularyHasOneHome).
const (
	// Lifecycle and utilities.
	MethodInitialize         = "initialize"
	MethodInitialized        = "notifications/initialized"
	MethodPing               = "ping"
	MethodDiscover           = "server/discover"
	MethodCancelled          = "notifications/cancelled"
	MethodProgress           = "notifications/progress"
	MethodMessage            = "notifications/message"
	MethodLoggingSetLevel    = "logging/setLevel"
	MethodCompletionComplete = "completion/complete"

	// Tools.
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	MethodToolsListChanged = "notifications/tools/list_changed"

	// Resources and prompts.
	MethodResourcesList         = "resources/list"
	MethodResourceTemplatesList = "resources/templates/list"
	MethodResourcesRead         = "resources/read"
	MethodResourcesSubscribe    = "resources/subscribe"
	MethodResourcesUnsubscribe  = "resources/unsubscribe"
	MethodResourcesUpdated      = "notifications/resources/updated"
	MethodResourcesListChanged  = "notifications/resources/list_changed"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodPromptsListChanged    = "notifications/prompts/list_changed"

	// Subscriptions (2026-07-28).
	MethodSubscriptionsListen       = "subscriptions/listen"
	MethodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"

	// Tasks: 2025-11-25 has them all; the 2026-07-28 tasks extension has
	// tasks/get, tasks/update and tasks/cancel.
	MethodTasksGet    = "tasks/get"
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
	MethodTasksCancel = "tasks/cancel"
	MethodTasksUpdate = "tasks/update"
	MethodTaskStatus  = "notifications/tasks/status"

	// Requests a server sends its client, and their notifications.
	MethodElicitationCreate   = "elicitation/create"
	MethodElicitationComplete = "notifications/elicitation/complete"
	MethodSamplingCreate      = "sampling/createMessage"
	MethodRootsList           = "roots/list"
)

// Error codes beyond JSON-RPC's own.
const (
	CodeResourceNotFound           = -32002 // legacy revisions
	CodeURLElicitationRequired     = -32042 // 2025-11-25
	CodeHeaderMismatch             = -32020 // 2026-07-28
	CodeMissingRequiredCapability  = -32021 // 2026-07-28
	CodeUnsupportedProtocolVersion = -32022 // 2026-07-28
)

// _meta keys of the 2026-07-28 revision, of progress and of tasks.
const (
	MetaProgressToken      = "progressToken"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task" // the task a message belongs to
)

// MetaReservedPrefix starts every _meta key the protocol itself defines.
const MetaReservedPrefix = "io.modelcontextprotocol/"

// ExtensionTasks names the 2026-07-28 tasks extension in capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// Result types (2026-07-28): a result's resultType member.
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required" // the server asks before it answers
	ResultTypeTask          = "task"           // a task was made: the result comes later
)

// Messages mcpx writes whose bytes never change, spelled from the names
// above.
const (
	// CompleteResult answers a request that returns nothing but that it
	// is done (2026-07-28).
	CompleteResult = `{"resultType":"` + ResultTypeComplete + `"}`
	// InitializedNotification is notifications/initialized, without params.
	InitializedNotification = `{"jsonrpc":"2.0","method":"` + MethodInitialized + `"}`
)

// Task statuses, of both revisions' tasks.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)
