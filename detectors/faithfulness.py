"""Being written: faithfulness detector."""
