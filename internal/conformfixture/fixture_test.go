package conformfixture

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// TestStdio drives the fixture over a stdio pair with the go-sdk client:
// its scenario names are listed and answered with the scenarios' texts.
// (The conformance suite itself grades the fixture over HTTP:
// internal/e2e/conformance TestConformanceServer.)
func TestStdio(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- New(nil).ServeStdio(ctx, sr, sw) }()

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"test_simple_text", "test_sampling", "test_missing_capability", "json_schema_2020_12_tool"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "This is a simple text response for testing." {
		t.Errorf("test_simple_text answered %#v", res.Content[0])
	}
	p, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "hello", "arg2": "world"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Prompt with arguments: arg1='hello', arg2='world'" {
		t.Errorf("test_prompt_with_arguments answered %#v", p.Messages[0].Content)
	}
	r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/123/data"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Contents[0].Text, `{"id":"123","templateTest":true,"data":"Data for ID: 123"}`; got != want {
		t.Errorf("template read %q, want %q", got, want)
	}
	s.Close()
	cw.Close()
	if err := <-served; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		t.Logf("ServeStdio returned %v", err)
	}
}

// TestRequestState: the fixture reads back the requestState it signed and
// refuses any other with -32602.
func TestRequestState(t *testing.T) {
	f := New(nil)
	state, err := f.verify(f.sign("round-1"))
	if err != nil || state != "round-1" {
		t.Fatalf("verify(sign(round-1)) = %q, %v", state, err)
	}
	signed := f.sign("round-1")
	for _, bad := range []string{"", "round-1", signed + "x", "cm91bmQtMg." + strings.SplitN(signed, ".", 2)[1], New(nil).sign("round-1")} {
		_, err := f.verify(bad)
		var jerr *jsonrpc.Error
		if !errors.As(err, &jerr) || jerr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("verify(%q) = %v, want -32602", bad, err)
		}
	}
}

// TestAskClient: the sampling and elicitation tools reach the client and
// answer with what it returned, whichever way the revision asks (requests
// before 2026-07-28, input_required and a retry from it on: the go-sdk
// client fulfils both).
func TestAskClient(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- New(nil).ServeStdio(ctx, sr, sw) }()
	defer func() { cw.Close(); <-served }()

	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.org"}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	})
	s, err := c.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Logf("protocol version %s", s.InitializeResult().ProtocolVersion)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"test_sampling", map[string]any{"prompt": "capital of France?"}, "LLM response: Paris"},
		{"test_elicitation", map[string]any{"message": "who?"}, `User response: action=accept, content={"email":"ada@example.org","username":"ada"}`},
	} {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil {
			t.Errorf("%s: %v", tc.tool, err)
			continue
		}
		if len(res.Content) == 0 {
			t.Errorf("%s answered no content (input_required left unanswered?)", tc.tool)
			continue
		}
		if tx, ok := res.Content[0].(*mcp.TextContent); !ok || tx.Text != tc.want {
			t.Errorf("%s answered %#v, want %q", tc.tool, res.Content[0], tc.want)
		}
	}
}
