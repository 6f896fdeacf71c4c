// Package hosttoken holds the named bearer tokens of HTTP hosts, each
// host's own so that one can be told from another and revoked alone, with
// their two backends: files in the token dir ([HostTokens], read again
// whenever the dir changes, for one mcpx), and the hashes in the shared
// store replicas use ([Shared], looked up on a token's first use and
// rechecked; [MintShared], [RevokeShared] and [ListShared] for the CLI,
// which opens the store itself). The default token is config's
// (config.Token); its file is the first token both backends accept.
//
// Names are checked by [CheckTokenName]; a token's value is never logged,
// listed or stored in the shared store (only its SHA-256 is).
// [HostTokens] and [Shared] are safe for concurrent use.
package hosttoken
