package extract

import (
	"strings"

	a "golang.org/x/net/html/atom"
)

// The table insertion modes, as the parser's.

func (b *builder) inTableStart(t *token) bool {
	switch t.a {
	case a.Caption, a.Table, a.Template:
		b.fail = true
	case a.Colgroup, a.Col:
		b.clearStackTo(a.Table, a.Template)
		if t.a == a.Col {
			b.addImplied(a.Colgroup)
			b.im = inColumnGroupIM
			return false
		}
		b.addElement(t)
		b.im = inColumnGroupIM
	case a.Tbody, a.Tfoot, a.Thead, a.Td, a.Th, a.Tr:
		b.clearStackTo(a.Table, a.Template)
		b.im = inTableBodyIM
		if t.a == a.Td || t.a == a.Th || t.a == a.Tr {
			b.addImplied(a.Tbody)
			return false
		}
		b.addElement(t)
	case a.Style, a.Script:
		return b.inHeadStart(t)
	case a.Input:
		for _, at := range t.attr {
			if at.Key == "type" && strings.EqualFold(at.Val, "hidden") {
				b.addElement(t)
				b.pop()
				return true
			}
		}
		b.fail = true
	case a.Form:
		if b.form == nil {
			b.addElement(t)
			b.form = b.top()
			b.pop()
		}
	default:
		b.foster = true
		done := b.inBodyStart(t)
		b.foster = false
		return done
	}
	return true
}

func (b *builder) inTableEnd(tag a.Atom, name string) {
	switch tag {
	case a.Table:
		if b.popUntil(tableScope, a.Table) {
			b.resetMode()
		}
	case a.Body, a.Caption, a.Col, a.Colgroup, a.Html, a.Tbody, a.Td, a.Tfoot, a.Th, a.Thead, a.Tr:
	case a.Template:
		b.fail = true
	default:
		b.foster = true
		b.inBodyEnd(tag, name)
		b.foster = false
	}
}

func (b *builder) inTableBodyStart(t *token) bool {
	switch t.a {
	case a.Tr, a.Td, a.Th:
		b.clearStackTo(a.Tbody, a.Tfoot, a.Thead, a.Template)
		b.im = inRowIM
		if t.a != a.Tr {
			b.addImplied(a.Tr)
			return false
		}
		b.addElement(t)
	case a.Caption, a.Col, a.Colgroup, a.Tbody, a.Tfoot, a.Thead:
		if b.popUntil(tableScope, a.Tbody, a.Thead, a.Tfoot) {
			b.im = inTableIM
			return false
		}
	default:
		return b.inTableStart(t)
	}
	return true
}

func (b *builder) inTableBodyEnd(tag a.Atom, name string) bool {
	switch tag {
	case a.Tbody, a.Tfoot, a.Thead:
		if b.inScope(tableScope, tag) {
			b.clearStackTo(a.Tbody, a.Tfoot, a.Thead, a.Template)
			b.pop()
			b.im = inTableIM
		}
	case a.Table:
		if b.popUntil(tableScope, a.Tbody, a.Thead, a.Tfoot) {
			b.im = inTableIM
			return false
		}
	case a.Body, a.Caption, a.Col, a.Colgroup, a.Html, a.Td, a.Th, a.Tr:
	default:
		b.inTableEnd(tag, name)
	}
	return true
}

func (b *builder) inRowStart(t *token) bool {
	switch t.a {
	case a.Td, a.Th:
		b.clearStackTo(a.Tr, a.Template)
		b.addElement(t)
		b.afe = append(b.afe, nil)
		b.im = inCellIM
	case a.Caption, a.Col, a.Colgroup, a.Tbody, a.Tfoot, a.Thead, a.Tr:
		if b.inScope(tableScope, a.Tr) {
			b.closeRow()
			return false
		}
	default:
		return b.inTableStart(t)
	}
	return true
}

func (b *builder) closeRow() {
	b.clearStackTo(a.Tr, a.Template)
	b.pop()
	b.im = inTableBodyIM
}

func (b *builder) inRowEnd(tag a.Atom, name string) bool {
	switch tag {
	case a.Tr:
		if b.inScope(tableScope, a.Tr) {
			b.closeRow()
		}
	case a.Table, a.Tbody, a.Tfoot, a.Thead:
		if (tag == a.Table || b.inScope(tableScope, tag)) && b.inScope(tableScope, a.Tr) {
			b.closeRow()
			return false
		}
	case a.Body, a.Caption, a.Col, a.Colgroup, a.Html, a.Td, a.Th:
	default:
		b.inTableEnd(tag, name)
	}
	return true
}

func (b *builder) inCellStart(t *token) bool {
	switch t.a {
	case a.Caption, a.Col, a.Colgroup, a.Tbody, a.Td, a.Tfoot, a.Th, a.Thead, a.Tr:
		if b.popUntil(tableScope, a.Td, a.Th) {
			b.clearFormatting()
			b.im = inRowIM
			return false
		}
		return true
	}
	return b.inBodyStart(t)
}

func (b *builder) inCellEnd(tag a.Atom, name string) bool {
	switch tag {
	case a.Td, a.Th:
		if b.popUntil(tableScope, tag) {
			b.clearFormatting()
			b.im = inRowIM
		}
	case a.Body, a.Caption, a.Col, a.Colgroup, a.Html:
	case a.Table, a.Tbody, a.Tfoot, a.Thead, a.Tr:
		if !b.inScope(tableScope, tag) {
			return true
		}
		if b.popUntil(tableScope, a.Td, a.Th) {
			b.clearFormatting()
		}
		b.im = inRowIM
		return false
	default:
		b.inBodyEnd(tag, name)
	}
	return true
}

func (b *builder) inColumnGroupStart(t *token) bool {
	switch t.a {
	case a.Html, a.Template:
		b.fail = true
	case a.Col:
		b.addElement(t)
		b.pop()
	default:
		if b.top().DataAtom != a.Colgroup {
			return true
		}
		b.pop()
		b.im = inTableIM
		return false
	}
	return true
}

func (b *builder) inColumnGroupEnd(tag a.Atom, _ string) bool {
	switch tag {
	case a.Colgroup:
		if b.top().DataAtom == a.Colgroup {
			b.pop()
			b.im = inTableIM
		}
	case a.Col:
	case a.Template:
		b.fail = true
	default:
		if b.top().DataAtom != a.Colgroup {
			return true
		}
		b.pop()
		b.im = inTableIM
		return false
	}
	return true
}
