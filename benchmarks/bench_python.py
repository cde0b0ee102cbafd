"""Pure-Python snippets: quick to time, and about a second each under callgrind."""
from benchkit import Timer

bench_sum_range = Timer("sum(range(100))", label="sum(range(100))")
bench_list_comprehension = Timer("[i * i for i in range(100)]", label="list comprehension")
bench_dict_lookup = Timer("d['key']", "d = {'key': 1, 'other': 2}", label="dict lookup")
bench_sorted = Timer("sorted(data)", "import random\nrandom.seed(0)\n"
                     "data = [random.random() for _ in range(100)]", label="sorted(100 floats)")
