"""A class's property objects are not handed out (red team 11).

``pd.Index.names`` read on the class is the property itself, and its ``fget``/``fset`` are the
functions behind it: ``Index._get_names`` and ``Index._set_names``, private functions the program
then held and called (``pd.MultiIndex.names.fset(mi, [...])``), and ``pd.Index.name.fset(i, 'x')``
changed an Index in place although ``_write_`` refuses Index objects. The value check let them through
because a function reached by a public attribute name (``fset``) was not checked by its own name
(aliases such as ``get_level_values`` are private-named functions too). A property object is now refused
like a module, whichever attribute or item hands it out.
"""
import pytest
from sandbox_testutil import policy_message

ATTACKS = [
    ("fset_private", "mi = pd.MultiIndex.from_product([[1, 2], ['a']])\npd.MultiIndex.names.fset(mi, ['p', 'q'])\nmi.names"),
    ("fget_private", "pd.Index.names.fget(pd.Index([1], name='n'))"),
    ("fset_write", "i = pd.Index([1, 2])\npd.Index.name.fset(i, 'zz')\ni.name"),
    ("getattr", "getattr(getattr(pd.Index, 'names'), 'fset')"),
    ("held", "p = pd.DataFrame.loc\n1"),
    ("in_a_list", "[pd.Series.values][0]"),
    ("timestamp_fget", "pd.Timestamp.daysinmonth.fget(pd.Timestamp('2020-02-01'))"),
]


@pytest.mark.parametrize("name,program", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_property_objects_are_refused(sb, name, program):
    assert "property" in policy_message(sb.run(program))


def test_properties_of_instances_still_read(sb):
    program = ("mi = pd.MultiIndex.from_product([[1, 2], ['a']], names=['p', 'q'])\n"
               "i = pd.Index([1, 2], name='n')\n"
               "[list(mi.names), i.name, pd.Timestamp('2020-02-01').daysinmonth, pd.Series([1]).values.tolist(),\n"
               " str(np.ndarray.shape)[:10]]")
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == [["p", "q"], "n", 29, [1], "<attribute"]
