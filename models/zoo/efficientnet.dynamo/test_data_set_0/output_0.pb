
BlogitsJPpЛ▒╗Dд>п╜dr'╛NzI┐tсь=╨Ш<q5╦╝Тs╛MRo>pЛ▒╗Dд>п╜dr'╛NzI┐tсь=╨Ш<q5╦╝Тs╛MRo>