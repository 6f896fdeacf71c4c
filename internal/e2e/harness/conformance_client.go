package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mcpx/internal/config"
	"mcpx/internal/daemon"
	"mcpx/internal/jsonrpc"
	"mcpx/internal/mcpxtest"
)

// ConformanceHostEnv makes the test binary a conformance host; its value
// is a conformanceHostSpec in JSON.
const ConformanceHostEnv = "MCPX_E2E_CONFORMANCE_HOST"

type ConformanceHostSpec struct {
	Dir    string `json:"dir"`    // the host's own directory: XDG dirs, config
	Report string `json:"report"` // where it writes its report
}

// ConformanceHostReport is what the host did.
type ConformanceHostReport struct {
	Scenario  string                `json:"scenario"`
	Version   string                `json:"version"` // MCP_CONFORMANCE_PROTOCOL_VERSION
	URL       string                `json:"url"`
	Era       string                `json:"era"` // the host's own: legacy or 2026-07-28
	Tools     []string              `json:"tools"`
	Calls     []ConformanceHostCall `json:"calls"`
	Error     string                `json:"error,omitempty"`
	ElapsedMs float64               `json:"elapsedMs"`
}

// ConformanceHostCall is one tools/call the host makes, and its outcome.
type ConformanceHostCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Refused: mcpx must refuse the call (a tool it must not offer).
	Refused bool `json:"refused,omitempty"`
	// WantText is the result's text the scenario server answers.
	WantText string `json:"wantText,omitempty"`
	// MRTR: the host answers an input_required result (elicitation with
	// {"confirmed": true}) and retries, as a 2026-07-28 client does.
	MRTR bool `json:"mrtr,omitempty"`
	// SchemaOf names a listed tool whose inputSchema, as mcpx listed it,
	// is passed as the argument "schema".
	SchemaOf string `json:"schemaOf,omitempty"`
	// Gap, when set, says why the call may fail through mcpx today (an
	// issue-4 gap the expected-failures file lists too): its failure is
	// reported, not held against the host.
	Gap string `json:"gap,omitempty"`
	// Rounds counts the input_required rounds the host answered.
	Rounds int `json:"rounds,omitempty"`

	Text     string `json:"text,omitempty"`
	IsError  bool   `json:"isError,omitempty"`
	RPCError string `json:"rpcError,omitempty"`
}

func (c ConformanceHostCall) Outcome() string {
	switch {
	case c.RPCError != "":
		return "error " + c.RPCError
	case c.IsError:
		return "isError " + c.Text
	case c.Rounds > 0:
		return fmt.Sprintf("%q after %d input_required round(s)", c.Text, c.Rounds)
	}
	return fmt.Sprintf("%q", c.Text)
}

// InvalidHeaderTools are the tools of http-invalid-tool-headers whose
// x-mcp-header annotations are invalid: a client must not call them, so
// mcpx must neither list them nor forward a call of them.
var InvalidHeaderTools = []string{
	"invalid_empty_header", "invalid_object_header", "invalid_array_header", "invalid_null_header",
	"invalid_number_header", "invalid_duplicate_same_case", "invalid_duplicate_diff_case",
	"invalid_space_in_name", "invalid_colon_in_name", "invalid_non_ascii_name", "invalid_control_char_name",
}

// ConformanceHostCalls are the calls a scenario expects of its client
// (read from each scenario's source in the installed packages);
// ctxJSON is MCP_CONFORMANCE_CONTEXT, which some scenarios give.
func ConformanceHostCalls(scenario, ctxJSON string) ([]ConformanceHostCall, error) {
	switch scenario {
	case "tools_call":
		return []ConformanceHostCall{{Tool: "add_numbers", Args: json.RawMessage(`{"a":5,"b":3}`), WantText: "The sum of 5 and 3 is 8"}}, nil
	case "sse-retry":
		// The result arrives on a GET stream resumed after the POST's
		// stream closed.
		return []ConformanceHostCall{{Tool: "test_reconnection", Args: json.RawMessage(`{}`), WantText: "Reconnection test completed successfully"}}, nil
	case "http-standard-headers":
		return []ConformanceHostCall{
			{Tool: "test_headers", Args: json.RawMessage(`{}`), WantText: "Headers test completed"},
			{Tool: "my-hyphenated-tool", Args: json.RawMessage(`{}`), WantText: "Headers test completed"},
		}, nil
	case "http-custom-headers":
		var c struct {
			ToolCalls []struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"toolCalls"`
		}
		if err := json.Unmarshal([]byte(ctxJSON), &c); err != nil || len(c.ToolCalls) == 0 {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT %q has no toolCalls (%v)", ctxJSON, err)
		}
		var out []ConformanceHostCall
		for _, tc := range c.ToolCalls {
			out = append(out, ConformanceHostCall{Tool: tc.Name, Args: tc.Arguments, WantText: "Custom headers test completed"})
		}
		return out, nil
	case "elicitation-sep1034-client-defaults":
		return []ConformanceHostCall{{Tool: "test_client_elicitation_defaults", Args: json.RawMessage(`{}`)}}, nil
	case "sep-2322-client-request-state":
		return []ConformanceHostCall{
			{Tool: "test_mrtr_echo_state", Args: json.RawMessage(`{}`), MRTR: true, WantText: "echo-state-ok"},
			{Tool: "test_mrtr_no_state", Args: json.RawMessage(`{}`), MRTR: true, WantText: "no-state-ok"},
			{Tool: "test_mrtr_unrelated", Args: json.RawMessage(`{}`), MRTR: true, WantText: "unrelated-ok"},
			{Tool: "test_mrtr_no_result_type", Args: json.RawMessage(`{}`), MRTR: true},
		}, nil
	case "json-schema-2020-12-preservation":
		return []ConformanceHostCall{{Tool: "json_schema_echo", SchemaOf: "json_schema_2020_12_tool"}}, nil
	case "http-invalid-tool-headers":
		out := []ConformanceHostCall{{Tool: "valid_tool", Args: json.RawMessage(`{"region":"us-west1"}`), WantText: "Tool call received"}}
		for _, name := range InvalidHeaderTools {
			out = append(out, ConformanceHostCall{Tool: name, Args: json.RawMessage(`{}`), Refused: true})
		}
		return out, nil
	}
	if strings.HasPrefix(scenario, "auth/") {
		return AuthHostCalls(scenario), nil
	}
	// initialize, request-metadata, json-schema-ref-no-deref: discovery
	// and tools/list only.
	return nil, nil
}

func init() {
	// The test binary re-executed by `conformance client` as its client.
	if spec := os.Getenv(ConformanceHostEnv); spec != "" {
		os.Exit(RunConformanceHost(spec))
	}
}

// RunConformanceHost is the host: it writes its report and returns the
// exit code.
func RunConformanceHost(specJSON string) int {
	start := time.Now()
	rep := &ConformanceHostReport{
		Scenario: os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		Version:  os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
	}
	var spec ConformanceHostSpec
	err := json.Unmarshal([]byte(specJSON), &spec)
	if err == nil {
		if len(os.Args) < 2 {
			err = errors.New("no server URL argument")
		} else {
			rep.URL = os.Args[len(os.Args)-1]
			err = ConformanceHost(spec, rep)
		}
	}
	if err != nil {
		rep.Error = err.Error()
		fmt.Fprintf(os.Stderr, "conformance host: %v\n", err)
	}
	rep.ElapsedMs = float64(time.Since(start).Microseconds()) / 1000
	b, _ := json.MarshalIndent(rep, "", "  ")
	if spec.Report != "" {
		if werr := os.WriteFile(spec.Report, b, 0o600); werr != nil {
			fmt.Fprintf(os.Stderr, "conformance host: writing the report: %v\n", werr)
			return 1
		}
	}
	fmt.Printf("%s\n", b)
	if rep.Error != "" {
		return 1
	}
	return 0
}

func ConformanceHost(spec ConformanceHostSpec, rep *ConformanceHostReport) error {
	calls, err := ConformanceHostCalls(rep.Scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		return err
	}
	for k, sub := range map[string]string{"XDG_CONFIG_HOME": "c", "XDG_STATE_HOME": "s", "XDG_RUNTIME_DIR": "r", "HOME": "h"} {
		p := filepath.Join(spec.Dir, sub)
		if err := os.MkdirAll(p, 0o700); err != nil {
			return err
		}
		os.Setenv(k, p)
	}
	// The scenario server is the only upstream, its tools unprefixed. Its
	// first answer can take seconds on a loaded machine (a cold Node
	// process compiling the spec's JSON schema to check mcpx's request):
	// longer than mcpx's default probe timeout (3 s), after which mcpx
	// takes a silent HTTP server for a legacy one, and then a 2026-07-28
	// scenario fails for want of CPU. So the probe waits longer here.
	cfgPath := filepath.Join(spec.Dir, "config.json")
	server := map[string]any{"type": "http", "url": rep.URL}
	opts := &daemon.Options{Version: "conformance"}
	if err := AuthHostSetup(rep.Scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"), spec.Dir, server, opts); err != nil {
		return err
	}
	doc := map[string]any{
		"mcpServers": map[string]any{"scenario": server},
		"mcpx":       map[string]any{"toolNames": map[string]any{"prefix": "auto"}, "probeTimeout": "15s"},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		return err
	}
	cfg, err := config.Load(cfgPath, nil)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second) // the CLI's is 30 s
	defer cancel()
	hostEnd, mcpxEnd := net.Pipe()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	served := make(chan error, 1)
	go func() {
		opts.Config, opts.Logger = cfg, log
		served <- daemon.ServeStdio(ctx, opts, mcpxEnd)
	}()
	h := NewPipeHost(hostEnd)
	err = ConformanceHostRun(ctx, h, rep, calls)
	hostEnd.Close()
	select {
	case serr := <-served:
		if serr != nil && err == nil {
			err = fmt.Errorf("mcpx returned %v", serr)
		}
	case <-time.After(10 * time.Second):
		if err == nil {
			err = errors.New("mcpx did not return within 10 s of the host leaving")
		}
	}
	return err
}

// ConformanceHostRun is the host's part: the era the scenario runs at
// (legacy initialize, or 2026-07-28 requests with their _meta), the tool
// list, and the calls.
func ConformanceHostRun(ctx context.Context, h *PipeHost, rep *ConformanceHostReport, calls []ConformanceHostCall) error {
	modern := rep.Version == "2026-07-28"
	var meta map[string]any
	if modern {
		rep.Era = "2026-07-28"
		meta = mcpxtest.ModernMeta(map[string]any{"io.modelcontextprotocol/clientInfo": map[string]any{"name": "mcpx-conformance-host", "version": "1"}})
		if _, err := h.call(ctx, "server/discover", map[string]any{"_meta": meta}); err != nil {
			return fmt.Errorf("server/discover: %w", err)
		}
	} else {
		rep.Era = "legacy"
		if _, err := h.call(ctx, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
			"clientInfo": map[string]any{"name": "mcpx-conformance-host", "version": "1"},
		}); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		h.notify("notifications/initialized")
	}
	withMeta := func(p map[string]any) map[string]any {
		if meta != nil {
			p["_meta"] = meta
		}
		return p
	}
	res, err := h.call(ctx, "tools/list", withMeta(map[string]any{}))
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("tools/list result %s: %w", res, err)
	}
	schemas := map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		rep.Tools = append(rep.Tools, tool.Name)
		schemas[tool.Name] = tool.InputSchema
	}
	var problems []string
	for _, c := range calls {
		listed := slices.Contains(rep.Tools, c.Tool)
		if listed == c.Refused {
			problems = append(problems, fmt.Sprintf("mcpx lists %q: %v, want %v", c.Tool, listed, !c.Refused))
		}
		args := c.Args
		if c.SchemaOf != "" {
			schema, ok := schemas[c.SchemaOf]
			if !ok {
				problems = append(problems, fmt.Sprintf("mcpx does not list %q, whose inputSchema %s needs", c.SchemaOf, c.Tool))
				continue
			}
			args = jsonrpc.MustMarshal(map[string]json.RawMessage{"schema": schema})
		}
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		res, err := h.call(ctx, "tools/call", withMeta(map[string]any{"name": c.Tool, "arguments": args}))
		for c.MRTR && err == nil && c.Rounds < 3 {
			retry, ok, rerr := MrtrRetry(res)
			if rerr != nil {
				problems = append(problems, fmt.Sprintf("tools/call %s: %v", c.Tool, rerr))
				break
			}
			if !ok {
				break
			}
			c.Rounds++
			retry["name"], retry["arguments"] = c.Tool, args
			res, err = h.call(ctx, "tools/call", withMeta(retry))
		}
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			c.RPCError = fmt.Sprintf("%d %s", rpcErr.Code, rpcErr.Message)
		case err != nil:
			return fmt.Errorf("tools/call %s: %w", c.Tool, err)
		default:
			var r struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			}
			if err := json.Unmarshal(res, &r); err != nil {
				return fmt.Errorf("tools/call %s result %s: %w", c.Tool, res, err)
			}
			c.IsError = r.IsError
			for _, ct := range r.Content {
				if ct.Type == "text" {
					c.Text += ct.Text
				}
			}
		}
		failed := c.RPCError != "" || c.IsError
		switch {
		case c.Gap != "":
			// Reported in the log; the expected-failures file holds the gap.
		case c.Refused && !failed:
			problems = append(problems, fmt.Sprintf("mcpx forwarded a call of %q, a tool it must not offer: %s", c.Tool, c.Outcome()))
		case !c.Refused && failed:
			problems = append(problems, fmt.Sprintf("tools/call %s failed: %s", c.Tool, c.Outcome()))
		case !c.Refused && c.WantText != "" && c.Text != c.WantText:
			problems = append(problems, fmt.Sprintf("tools/call %s: text %q, want %q", c.Tool, c.Text, c.WantText))
		}
		rep.Calls = append(rep.Calls, c)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
