package evaldata

import (
	"os"
	"testing"
)

// TestMain says how many tests were skipped for want of the evaluation data.
func TestMain(m *testing.M) { os.Exit(Main(m)) }
