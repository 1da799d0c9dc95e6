import pytest
import stride


@pytest.fixture(autouse=True)
def seeded():
    """Every test starts from the same generator state."""
    stride.manual_seed(0)
    yield
