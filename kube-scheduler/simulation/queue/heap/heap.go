/*
Copyright 2018 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Below is the implementation of the a heap. The logic is pretty much the same
// as cache.heap, however, this heap does not perform synchronization. It leaves
// synchronization to the SchedulingQueue.

package heap

import (
	"container/heap"
	"fmt"
	"time"

	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// KeyFunc is a function type to get the key from an object.
type KeyFunc[T any] func(obj T) string

type heapItem[T any] struct {
	obj   T      // The object which is stored in the heap.
	index int    // The item's index in the Heap.queue.
	key   string // The object's key in "items".
}

type itemKeyValue[T any] struct {
	key string
	obj T
}

// Rank is what kube-scheduler's PrioritySort orders pods by: the pod's priority, then its queue Timestamp.
// (Added to upstream's code.)
type Rank struct {
	Priority  int32
	Timestamp time.Time
}

// Before is PrioritySort.Less on two ranks: (p1 > p2) || (p1 == p2 && t1.Before(t2)).
func (r *Rank) Before(other *Rank) bool {
	return r.Priority > other.Priority || (r.Priority == other.Priority && r.Timestamp.Before(other.Timestamp))
}

// RankFunc gives an object's Rank, for a heap whose LessFunc is Rank.Before on the objects' ranks.
type RankFunc[T any] func(obj T) Rank

// slot is an entry of the heap's array (added to upstream's code): the item, and its rank if the heap has a
// RankFunc.
type slot[T any] struct {
	item *heapItem[T]
	rank Rank
}

// data is an internal struct that implements the standard heap interface
// and keeps the data stored in the heap.
//
// Changed from upstream (v1.34 pkg/scheduler/backend/heap): queue holds the items themselves instead of their
// keys, so Less and Swap reach the two objects without looking their keys up in items. Less compares the same
// two objects and Swap moves the same two entries as upstream's, so container/heap makes the same moves and the
// heap pops the same objects in the same order. With a RankFunc (a heap ordered by PrioritySort), each entry also
// holds its object's rank, taken when the object is pushed or updated, and Less compares the ranks, in the array,
// instead of calling lessFunc, which reads them through four pointers: the same answers as long as an object's
// priority and Timestamp do not change while it is in the heap without an AddOrUpdate (a pod's priority cannot
// change; the queue sets a Timestamp only on pods it does not hold).
type data[T any] struct {
	// items is a map from key of the objects to the objects and their index.
	// We depend on the property that items in the map are in the queue and vice versa.
	items map[string]*heapItem[T]
	// queue implements a heap data structure and keeps the order of elements
	// according to the heap invariant. The queue keeps the items of "items".
	queue []slot[T]
	// rankFunc, if not nil, gives the ranks that Less compares instead of calling lessFunc.
	rankFunc RankFunc[T]

	// keyFunc is used to make the key used for queued item insertion and retrieval, and
	// should be deterministic.
	keyFunc KeyFunc[T]
	// lessFunc is used to compare two objects in the heap.
	lessFunc LessFunc[T]
}

var (
	_ = heap.Interface(&data[any]{}) // heapData is a standard heap
)

// Less compares two objects and returns true if the first one should go
// in front of the second one in the heap.
func (h *data[T]) Less(i, j int) bool {
	if i > len(h.queue) || j > len(h.queue) {
		return false
	}
	if h.rankFunc != nil {
		return h.queue[i].rank.Before(&h.queue[j].rank)
	}
	return h.lessFunc(h.queue[i].item.obj, h.queue[j].item.obj)
}

// Len returns the number of items in the Heap.
func (h *data[T]) Len() int { return len(h.queue) }

// Swap implements swapping of two elements in the heap. This is a part of standard
// heap interface and should never be called directly.
func (h *data[T]) Swap(i, j int) {
	if i < 0 || j < 0 {
		return
	}
	h.queue[i], h.queue[j] = h.queue[j], h.queue[i]
	h.queue[i].item.index = i
	h.queue[j].item.index = j
}

// Push is supposed to be called by container/heap.Push only.
func (h *data[T]) Push(kv interface{}) {
	keyValue := kv.(*itemKeyValue[T])
	item := &heapItem[T]{keyValue.obj, len(h.queue), keyValue.key}
	h.items[keyValue.key] = item
	h.queue = append(h.queue, slot[T]{item: item, rank: h.rankOf(keyValue.obj)})
}

// Pop is supposed to be called by container/heap.Pop only.
func (h *data[T]) Pop() interface{} {
	if len(h.queue) == 0 {
		return nil
	}
	item := h.queue[len(h.queue)-1].item
	h.queue[len(h.queue)-1] = slot[T]{}
	h.queue = h.queue[0 : len(h.queue)-1]
	delete(h.items, item.key)
	return item.obj
}

// Peek returns the head of the heap without removing it.
func (h *data[T]) Peek() (T, bool) {
	if len(h.queue) > 0 {
		return h.queue[0].item.obj, true
	}
	var zero T
	return zero, false
}

// rankOf is obj's rank, or none without a RankFunc (added to upstream's code).
func (h *data[T]) rankOf(obj T) Rank {
	if h.rankFunc == nil {
		return Rank{}
	}
	return h.rankFunc(obj)
}

// Heap is a producer/consumer queue that implements a heap data structure.
// It can be used to implement priority queues and similar data structures.
type Heap[T any] struct {
	// data stores objects and has a queue that keeps their ordering according
	// to the heap invariant.
	data *data[T]
	// metricRecorder updates the counter when elements of a heap get added or
	// removed, and it does nothing if it's nil
	metricRecorder metrics.MetricRecorder
}

// AddOrUpdate inserts an item, and puts it in the queue. The item is updated if it
// already exists.
func (h *Heap[T]) AddOrUpdate(obj T) {
	key := h.data.keyFunc(obj)
	if _, exists := h.data.items[key]; exists {
		h.data.items[key].obj = obj
		h.data.queue[h.data.items[key].index].rank = h.data.rankOf(obj) // added to upstream's code
		heap.Fix(h.data, h.data.items[key].index)
	} else {
		heap.Push(h.data, &itemKeyValue[T]{key, obj})
		if h.metricRecorder != nil {
			h.metricRecorder.Inc()
		}
	}
}

// Delete removes an item.
func (h *Heap[T]) Delete(obj T) error {
	key := h.data.keyFunc(obj)
	if item, ok := h.data.items[key]; ok {
		heap.Remove(h.data, item.index)
		if h.metricRecorder != nil {
			h.metricRecorder.Dec()
		}
		return nil
	}
	return fmt.Errorf("object not found")
}

// Peek returns the head of the heap without removing it.
func (h *Heap[T]) Peek() (T, bool) {
	return h.data.Peek()
}

// Pop returns the head of the heap and removes it.
func (h *Heap[T]) Pop() (T, error) {
	obj := heap.Pop(h.data)
	if obj != nil {
		if h.metricRecorder != nil {
			h.metricRecorder.Dec()
		}
		return obj.(T), nil
	}
	var zero T
	return zero, fmt.Errorf("heap is empty")
}

// Get returns the requested item, or sets exists=false.
func (h *Heap[T]) Get(obj T) (T, bool) {
	key := h.data.keyFunc(obj)
	return h.GetByKey(key)
}

// GetByKey returns the requested item, or sets exists=false.
func (h *Heap[T]) GetByKey(key string) (T, bool) {
	item, exists := h.data.items[key]
	if !exists {
		var zero T
		return zero, false
	}
	return item.obj, true
}

func (h *Heap[T]) Has(obj T) bool {
	key := h.data.keyFunc(obj)
	_, ok := h.GetByKey(key)
	return ok
}

// List returns a list of all the items.
func (h *Heap[T]) List() []T {
	list := make([]T, 0, len(h.data.items))
	for _, item := range h.data.items {
		list = append(list, item.obj)
	}
	return list
}

// Len returns the number of items in the heap.
func (h *Heap[T]) Len() int {
	return len(h.data.queue)
}

// New returns a Heap which can be used to queue up items to process.
func New[T any](keyFn KeyFunc[T], lessFn LessFunc[T]) *Heap[T] {
	return NewWithRecorder(keyFn, lessFn, nil)
}

// NewWithRecorder wraps an optional metricRecorder to compose a Heap object.
func NewWithRecorder[T any](keyFn KeyFunc[T], lessFn LessFunc[T], metricRecorder metrics.MetricRecorder) *Heap[T] {
	return &Heap[T]{
		data: &data[T]{
			items:    map[string]*heapItem[T]{},
			queue:    []slot[T]{},
			keyFunc:  keyFn,
			lessFunc: lessFn,
		},
		metricRecorder: metricRecorder,
	}
}

// NewRanked is NewWithRecorder for a heap whose lessFn is Rank.Before on the objects' ranks given by rankFn: Less
// compares the ranks kept in the heap's array (added to upstream's code).
func NewRanked[T any](keyFn KeyFunc[T], lessFn LessFunc[T], rankFn RankFunc[T],
	metricRecorder metrics.MetricRecorder) *Heap[T] {
	h := NewWithRecorder(keyFn, lessFn, metricRecorder)
	h.data.rankFunc = rankFn
	return h
}

// LessFunc is a function that receives two items and returns true if the first
// item should be placed before the second one when the list is sorted.
type LessFunc[T any] func(item1, item2 T) bool
