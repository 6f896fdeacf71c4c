package conformfixture

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func prompt(msgs ...*mcp.PromptMessage) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Messages: msgs}
}

func user(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }

// addPrompts adds the prompts of the prompts-* scenarios.
func (f *Fixture) addPrompts() {
	f.srv.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(user(&mcp.TextContent{Text: "This is a simple prompt for testing."})), nil
		})
	f.srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments",
		Arguments: []*mcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := req.Params.Arguments
			return prompt(user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})), nil
		})
	f.srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(
				user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
					URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
				}}),
				user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
			), nil
		})
	f.srv.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return prompt(
				user(&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."}),
			), nil
		})
}

func contents(c *mcp.ResourceContents) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

// addResources adds the resources and the template of the resources-*
// scenarios.
func (f *Fixture) addResources() {
	f.srv.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(&mcp.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}), nil
		})
	f.srv.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG)", MIMEType: "image/png"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(&mcp.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: redPixelPNG}), nil
		})
	f.srv.AddResource(&mcp.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource that can be subscribed to", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(&mcp.ResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "Watched resource content."}), nil
		})
	f.srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template-data",
		Description: "Data for an id", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			uri := req.Params.URI
			id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
			return contents(&mcp.ResourceContents{URI: uri, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)}), nil
		})
}

// completionWords are the values completion/complete offers, filtered by
// the argument's prefix.
var completionWords = []string{"paris", "park", "party", "123", "456", "hello", "world"}

// complete answers completion/complete for any prompt or template
// argument: the words that start with the typed value.
func complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var values []string
	for _, w := range completionWords {
		if strings.HasPrefix(w, req.Params.Argument.Value) {
			values = append(values, w)
		}
	}
	if values == nil {
		values = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, nil
}
