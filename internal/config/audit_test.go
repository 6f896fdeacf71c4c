package config

import (
	"strings"
	"testing"
	"time"
)

func TestAuditBlock(t *testing.T) {
	c, err := Parse([]byte(`{"mcpx": {"audit": {"file": "/var/log/mcpx/audit.jsonl", "onFailure": "open", "queue": 10, "maxAge": "720h", "maxRows": 1000}}}`), "/x/mcpx.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Audit{Enabled: true, File: "/var/log/mcpx/audit.jsonl", Store: true, FailOpen: true, Queue: 10, MaxAge: 720 * time.Hour, MaxRows: 1000}
	if c.Audit != want {
		t.Errorf("audit %+v, want %+v", c.Audit, want)
	}
	if c, err := Parse([]byte(`{"mcpx": {}}`), "/x/mcpx.json", nil); err != nil || c.Audit.Enabled {
		t.Errorf("no block: %+v, %v", c.Audit, err)
	}
	if c, err := Parse([]byte(`{"mcpx": {"audit": {}}}`), "/x/mcpx.json", nil); err != nil || !c.Audit.Store || c.Audit.FailOpen {
		t.Errorf("an empty block: %+v, %v; want the store, failing closed", c.Audit, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"audit": {"onFailure": "maybe"}}`, `mcpx.audit.onFailure: must be "closed"`},
		{`{"audit": {"store": false}}`, `mcpx.audit: names no place for the records`},
		{`{"audit": {"queue": 0}}`, `mcpx.audit.queue`},
		{`{"audit": {"maxAge": "soon"}}`, `mcpx.audit.maxAge`},
		{`{"audit": {"files": "x"}}`, `files`},
	} {
		_, err := Parse([]byte(`{"mcpx": `+tc.doc+`}`), "/x/mcpx.json", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.doc, err, tc.want)
		}
	}
}
