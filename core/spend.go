package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jake-bot/jake-bot/core/recent"
)

// spendDays is how many days of per-user spend are kept.
const spendDays = 31

// Day is the UTC day t falls on, as budgets count days.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// AddSpend counts a turn of user's on day, and forgets days older than a
// month.
func (c *State) AddSpend(user, day string, res TurnResult) {
	c.mu.Lock()
	s := c.spent[UserSpend{User: user, Day: day}.key()]
	s.User, s.Day = user, day
	s.add(res)
	c.spent[s.key()] = s
	oldest := day
	if t, err := time.Parse(time.DateOnly, day); err == nil {
		oldest = Day(t.AddDate(0, 0, -spendDays))
	}
	for k, v := range c.spent {
		if v.Day < oldest {
			delete(c.spent, k)
		}
	}
	c.mu.Unlock()
	c.changed()
}

// Spent returns user's spend on day.
func (c *State) Spent(user, day string) Spend {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.spent[UserSpend{User: user, Day: day}.key()].Spend
}

// Spends returns every user's spend of every kept day, sorted by day and
// user, for saving and for /cost all.
func (c *State) Spends() []UserSpend {
	c.mu.RLock()
	out := slices.Collect(maps.Values(c.spent))
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b UserSpend) int { return cmp.Compare(a.key(), b.key()) })
	return out
}

// LoadSpends adds saved spend, as at start-up.
func (c *State) LoadSpends(spends []UserSpend) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range spends {
		c.spent[s.key()] = s
	}
}

// Budgets bound what turns may cost. Zero means no bound.
type Budgets struct {
	// TurnUSD stops a turn whose reported cost reaches it.
	TurnUSD float64
	// UserDailyUSD refuses new turns to a user who spent it today (UTC).
	UserDailyUSD float64
	// UserDailyTokens refuses new turns to a user whose turns used that
	// many tokens (in and out) today: it bounds the CLIs that report no
	// cost. A CLI reports a turn's tokens when the turn ends, so the last
	// turn may pass it.
	UserDailyTokens int
	// Admins makes admins subject to all; otherwise they are exempt.
	Admins bool
}

// dollars reports whether a dollar budget is set.
func (b Budgets) dollars() bool { return b.TurnUSD > 0 || b.UserDailyUSD > 0 }

// budgeted reports whether the budgets apply to m's author.
func (h *budgetHolds) budgeted(m Message) bool {
	return h.budgets.Admins || !h.access.RightsOf(m).Admin
}

// budgetFor returns the most m's turn may cost (0: no bound), or a
// refusal when its author has spent their day's budget. held is what the
// author's turns running now may still spend: it counts against the
// day's remainder, so that turns side by side cannot each be given all of
// it; errBudgetHeld says they hold it all.
func (h *budgetHolds) budgetFor(m Message, held float64) (maxUSD float64, refusal error) {
	b := h.budgets
	if !h.budgeted(m) {
		return 0, nil
	}
	now := h.clock.Now()
	spent := h.state.Spent(OwnerOf(m), Day(now))
	until := func() time.Duration {
		return now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now).Round(time.Minute)
	}
	if used := spent.InputTokens + spent.OutputTokens; b.UserDailyTokens > 0 && used >= b.UserDailyTokens {
		return 0, Errorf("your turns used %s tokens today, your daily budget is %s: new turns start again at 00:00 UTC (in %s)",
			kilo(used), kilo(b.UserDailyTokens), until())
	}
	maxUSD = b.TurnUSD
	if b.UserDailyUSD > 0 {
		left := b.UserDailyUSD - spent.CostUSD
		if left <= 0 {
			return 0, Errorf("you have spent $%.4f today, your daily budget is $%.2f: new turns start again at 00:00 UTC (in %s)",
				spent.CostUSD, b.UserDailyUSD, until())
		}
		if left -= held; left <= 0 {
			return 0, errBudgetHeld
		}
		if maxUSD == 0 || left < maxUSD {
			maxUSD = left
		}
	}
	return maxUSD, nil
}

// errBudgetHeld says that the author's turns running now may spend all
// that is left of their daily budget.
var errBudgetHeld = errors.New("the daily budget's remainder is held by running turns")

// budgetHolds are the dollar bounds of the turns running now, per user
// (budgetFor's held). It is safe for concurrent use.
type budgetHolds struct {
	// budgets are the bounds; access says who is an admin (exempt unless
	// Budgets.Admins); state is where the day's spend is kept; saidOnce
	// the router's notes said once per conversation.
	budgets  Budgets
	access   *Access
	clock    Clock
	state    *State
	saidOnce *recent.Map[string, struct{}]

	mu   sync.Mutex
	held map[string]budgetHold
	// freed is closed, and replaced, whenever a hold is released.
	freed chan struct{}
}

type budgetHold struct {
	usd   float64
	turns int // the hold goes with the last turn, float rounding or not
}

func newBudgetHolds(budgets Budgets, access *Access, clock Clock, state *State, saidOnce *recent.Map[string, struct{}]) *budgetHolds {
	return &budgetHolds{budgets: budgets, access: access, clock: clock, state: state, saidOnce: saidOnce,
		held: make(map[string]budgetHold), freed: make(chan struct{})}
}

// holdBudget gives m's turn its cost bound and holds it against its
// author's daily remainder until release is called. Where the author's
// other running turns hold all of it, it waits for one of them to end,
// calling waiting once, unless ctx ends first.
func (h *budgetHolds) holdBudget(ctx context.Context, m Message, waiting func()) (maxUSD float64, release func(), err error) {
	if !h.budgeted(m) {
		return 0, func() {}, nil
	}
	user, told := OwnerOf(m), false
	for {
		h.mu.Lock()
		maxUSD, err = h.budgetFor(m, h.held[user].usd)
		if err == nil {
			bh := h.held[user]
			bh.usd, bh.turns = bh.usd+maxUSD, bh.turns+1
			h.held[user] = bh
			h.mu.Unlock()
			return maxUSD, sync.OnceFunc(func() { h.release(user, maxUSD) }), nil
		}
		freed := h.freed
		h.mu.Unlock()
		if !errors.Is(err, errBudgetHeld) {
			return 0, nil, err
		}
		if !told {
			waiting()
			told = true
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return 0, nil, context.Cause(ctx)
		}
	}
}

func (h *budgetHolds) release(user string, usd float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	bh := h.held[user]
	if bh.usd, bh.turns = bh.usd-usd, bh.turns-1; bh.turns <= 0 {
		delete(h.held, user)
	} else {
		h.held[user] = bh
	}
	close(h.freed)
	h.freed = make(chan struct{})
}

// heldBy returns what user's running turns may still spend.
func (h *budgetHolds) heldBy(user string) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[user].usd
}

// budgetNote explains a turn that ended at its cost bound.
func (h *budgetHolds) budgetNote(maxUSD float64, res TurnResult) string {
	if maxUSD <= 0 || res.CostUSD < maxUSD {
		return ""
	}
	which := "the turn budget (BUDGET_TURN_USD)"
	if h.budgets.TurnUSD == 0 || maxUSD < h.budgets.TurnUSD {
		which = "what is left of your daily budget (BUDGET_USER_DAILY_USD)"
	}
	return fmt.Sprintf("This turn was stopped when it had cost $%.4f, reaching %s of $%.4f.", res.CostUSD, which, maxUSD)
}

// unpricedNote warns, once per conversation and plugin, that a dollar
// budget the turn's author is under does not bound a CLI that reported
// tokens but no cost.
func (h *budgetHolds) unpricedNote(m Message, p Plugin, res TurnResult) string {
	b := h.budgets
	if !b.dollars() || res.CostUSD > 0 || res.InputTokens+res.OutputTokens == 0 || !h.budgeted(m) ||
		!h.saidOnce.Add("unpriced "+m.Key.String()+" "+p.ID(), struct{}{}) {
		return ""
	}
	bound := "set BUDGET_USER_DAILY_TOKENS to bound them."
	if b.UserDailyTokens > 0 {
		bound = fmt.Sprintf("your daily %s tokens (BUDGET_USER_DAILY_TOKENS) do.", kilo(b.UserDailyTokens))
	}
	return fmt.Sprintf("%s reports tokens, not dollars: the dollar budgets (BUDGET_TURN_USD, BUDGET_USER_DAILY_USD) do not bound its turns; %s", p.Name(), bound)
}
