package mcp

// Method names mcpx acts on.
const (
	MethodInitialize       = "initialize"
	MethodInitialized      = "notifications/initialized"
	MethodPing             = "ping"
	MethodDiscover         = "server/discover"
	MethodToolsList        = "tools/list"
	MethodToolsCall        = "tools/call"
	MethodCancelled        = "notifications/cancelled"
	MethodProgress         = "notifications/progress"
	MethodToolsListChanged = "notifications/tools/list_changed"
	MethodMessage          = "notifications/message"

	MethodSubscriptionsListen       = "subscriptions/listen"
	MethodSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	MethodResourcesSubscribe        = "resources/subscribe"
	MethodResourcesUnsubscribe      = "resources/unsubscribe"
	MethodResourcesUpdated          = "notifications/resources/updated"
)

// Error codes beyond JSON-RPC's own.
const (
	CodeResourceNotFound           = -32002 // legacy revisions
	CodeURLElicitationRequired     = -32042 // 2025-11-25
	CodeHeaderMismatch             = -32020 // 2026-07-28
	CodeMissingRequiredCapability  = -32021 // 2026-07-28
	CodeUnsupportedProtocolVersion = -32022 // 2026-07-28
)

// _meta keys of the 2026-07-28 revision and of progress.
const (
	MetaProgressToken      = "progressToken"
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// MetaReservedPrefix starts every _meta key the protocol itself defines.
const MetaReservedPrefix = "io.modelcontextprotocol/"
