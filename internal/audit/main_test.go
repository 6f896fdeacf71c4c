package audit

import (
	"testing"

	"go.uber.org/goleak"
)

// Run owns the writer; it returns having written or dropped every record.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
