package aegis

import "context"

// Page is one page of a list: its items and the cursor of the next page.
type Page[T any] struct {
	// Data holds the page's items.
	Data []T `json:"data"`
	// Pagination says where the next page starts (Next is nil on the last page).
	Pagination Pagination `json:"pagination"`

	next func(ctx context.Context, cursor string) (*Page[T], error)
}

// HasNextPage reports whether another page follows this one.
func (p *Page[T]) HasNextPage() bool {
	return p != nil && p.Pagination.Next != nil && *p.Pagination.Next != ""
}

// NextPage fetches the page after this one, with the same filters; nil, nil after the last page.
func (p *Page[T]) NextPage(ctx context.Context) (*Page[T], error) {
	if !p.HasNextPage() || p.next == nil {
		return nil, nil
	}
	return p.next(ctx, *p.Pagination.Next)
}

// Iter walks over every item of a list, fetching pages as it goes:
//
//	it := client.ShieldSites.ListAutoPaging(ctx, nil)
//	for it.Next() {
//		site := it.Current()
//		…
//	}
//	if err := it.Err(); err != nil { … }
type Iter[T any] struct {
	ctx     context.Context
	first   func(ctx context.Context) (*Page[T], error)
	page    *Page[T]
	index   int
	current T
	err     error
	done    bool
}

func newIter[T any](ctx context.Context, first func(ctx context.Context) (*Page[T], error)) *Iter[T] {
	return &Iter[T]{ctx: ctx, first: first, index: -1}
}

// Next advances to the next item, fetching the next page when needed; false at the end or on an
// error (see Err).
func (it *Iter[T]) Next() bool {
	if it.done {
		return false
	}
	for {
		if it.page != nil && it.index+1 < len(it.page.Data) {
			it.index++
			it.current = it.page.Data[it.index]
			return true
		}
		var page *Page[T]
		var err error
		if it.page == nil {
			page, err = it.first(it.ctx)
		} else {
			page, err = it.page.NextPage(it.ctx)
		}
		if err != nil || page == nil {
			it.err = err
			it.done = true
			var zero T
			it.current = zero
			return false
		}
		it.page = page
		it.index = -1
		if len(page.Data) == 0 && !page.HasNextPage() {
			it.done = true
			return false
		}
	}
}

// Current is the item Next moved to.
func (it *Iter[T]) Current() T { return it.current }

// Err is the error that ended the iteration, if any.
func (it *Iter[T]) Err() error { return it.err }

// Page is the page the current item comes from.
func (it *Iter[T]) Page() *Page[T] { return it.page }
