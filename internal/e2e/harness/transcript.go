package harness

import (
	"time"
)

// TranscriptWait bounds every wait of the transcript tests.
const TranscriptWait = 30 * time.Second
