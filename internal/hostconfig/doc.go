// Package hostconfig reads and edits the MCP server lists of the hosts mcpx
// serves: Claude Desktop, Claude Code, Cursor, VS Code, opencode, Codex,
// Gemini CLI and Windsurf.
//
// Reading ([Read]) turns a host's file into entries of mcpx's mcpServers
// form. Every field of every server is accounted for: taken as it is,
// taken with a change (a note says which), or skipped with a reason;
// a server mcpx cannot run as the host would is skipped whole, with the
// reason. Variables the host fills in (VS Code's ${input:…}, Cursor's
// ${env:…}, opencode's {env:…}) become mcpx ${VAR} references, and the
// variables the user must then set are listed.
//
// Editing ([Plan]) adds, replaces or removes members of the host's server
// list by splicing bytes: every byte outside the edited members stays as
// it was, comments included. Each edit is checked by reading the result
// back: the document must equal the original with exactly the intended
// change, or the edit is refused. A file the package cannot edit that way
// (a server list that is not an object, duplicate keys, TOML servers
// outside [mcp_servers.NAME] tables) is refused with the reason.
//
// The package only reads and writes bytes it is given; callers do the
// file I/O. It has no state and is safe for concurrent use. It imports
// nothing of mcpx: the standard library and a TOML parser.
package hostconfig
