"""OS::Heat::* resource types that touch no cloud."""
